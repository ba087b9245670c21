# Sourced by the scripts that build with SwiftPM before they run what they built.
#
# build_product [ARGUMENT…]: `swift build ARGUMENT…`, its output on stderr without the noise of a build that works
# (progress lines, "Building for …", "Build … complete", and two linker warnings about the toolchain's own code: gold's
# about AddressSanitizer's symbols in the fuzz builds, and the one about mktemp in the static Foundation). Its status
# is the build's: sed never fails and pipefail passes the build's failure on, so a failed build returns non-zero
# after the compiler's messages, and under `set -e` stops the script that called it.
build_product() {
    local - status=0
    set -o pipefail
    swift build "$@" 2>&1 | sed -E \
        -e '/^\[[0-9]+\/[0-9]+\]/d' -e '/^Building for /d' -e '/^Build (of product .*)?complete/d' \
        -e "/Cannot export local symbol '__asan/d" \
        -e "/libFoundationEssentials.a.*warning: the use of .mktemp' is dangerous/d" >&2 || status=$?
    [ "$status" -eq 0 ] || echo "swift build $* failed (status $status); its messages are above." >&2
    return "$status"
}
