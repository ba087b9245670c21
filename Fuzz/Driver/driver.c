#include "CFuzzDriver.h"

// libFuzzer's entry point for programs that have their own main (SwiftPM executables always do).
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*user_callback)(const uint8_t *data, size_t size));

int fuzz_run(int argc, char **argv, fuzz_one_input body) {
    return LLVMFuzzerRunDriver(&argc, &argv, body);
}
