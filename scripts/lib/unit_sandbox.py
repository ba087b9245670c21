"""Starts a service the way its systemd unit says, on a machine where systemd is not running (a container, CI).

Usage:
  unit_sandbox.py service UNIT_FILE INSTANCE [--bind SRC:DST]... [--hide DIR]...
      Becomes the unit's ExecStart (same process id) as systemd would start it: User=, Group=, Environment= and
      EnvironmentFile= (the file's settings win, as in systemd), WorkingDirectory=, UMask=, LimitNOFILE=,
      StateDirectory= (owned by the user, StateDirectoryMode=, the one writable folder), ProtectSystem=strict
      (every other mount read-only but /proc, /sys and /dev), ProtectHome=yes, PrivateTmp=yes,
      NoNewPrivileges=yes and an empty CapabilityBoundingSet=, in a mount namespace of its own.
      The directives listed in NOT_EMULATED are left to systemd (systemd-analyze verify checks them); any other
      directive stops this script, so that a unit never carries one nobody has tried.
  unit_sandbox.py run [--bind SRC:DST]... [--hide DIR]... -- COMMAND...
      Runs COMMAND as it is, as root, in a mount namespace with the same binds: an operator's command from the
      documents, run word for word against this run's files.

--bind SRC:DST mounts SRC over DST in the namespace only (this run's settings file over the installed one, a
temporary folder over the state folder), so the machine's own files are never touched. --hide DIR mounts an
empty folder over DIR (the Swift toolchain: the packaged binary must run without it).
Standard library only; needs root (mount namespaces), unshare and setpriv from util-linux.
"""
import grp
import os
import pwd
import resource
import shlex
import sys

EMULATED = {"User", "Group", "EnvironmentFile", "Environment", "WorkingDirectory", "UMask", "LimitNOFILE",
            "StateDirectory", "StateDirectoryMode", "ProtectSystem", "ProtectHome", "PrivateTmp",
            "NoNewPrivileges", "CapabilityBoundingSet", "ExecStart"}
NOT_EMULATED = {"Type", "Restart", "RestartSec", "TimeoutStopSec", "PrivateDevices", "ProtectKernelTunables",
                "ProtectKernelModules", "ProtectKernelLogs", "ProtectControlGroups", "ProtectClock",
                "ProtectHostname", "RestrictAddressFamilies", "RestrictNamespaces", "RestrictRealtime",
                "RestrictSUIDSGID", "LockPersonality"}
API_FILE_SYSTEMS = ("/proc", "/sys", "/dev")


def fail(message):
    print("unit_sandbox: " + message, file=sys.stderr)
    sys.exit(2)


def service_section(path, instance):
    """The [Service] directives, each a list of its values in order, with %i and %% replaced."""
    directives, section = {}, None
    with open(path, encoding="utf-8") as unit:
        for raw in unit:
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line
                continue
            if section != "[Service]":
                continue
            key, _, value = line.partition("=")
            value = value.strip().replace("%%", "\0").replace("%i", instance)
            if "%" in value:
                fail(f"{key}= uses a specifier other than %i: {value}")
            directives.setdefault(key.strip(), []).append(value.replace("\0", "%"))
    unknown = set(directives) - EMULATED - NOT_EMULATED
    if unknown:
        fail("the unit has directives this script neither emulates nor knows to leave to systemd: "
             + ", ".join(sorted(unknown)))
    return directives


def environment_file(path):
    """KEY=value lines as systemd's EnvironmentFile= reads them: `#` and `;` start a comment only at the start of
    a line, and everything after `=` is the value (quotes around all of it removed)."""
    values = {}
    with open(path, encoding="utf-8") as settings:
        for number, raw in enumerate(settings, 1):
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            key, equals, value = line.partition("=")
            if not equals:
                fail(f"{path}:{number}: not KEY=value")
            value = value.strip()
            if len(value) >= 2 and value[0] in "\"'" and value[-1] == value[0]:
                value = value[1:-1]
            values[key.strip()] = value
    return values


def outside(path, binds):
    """Where a path of the namespace is on this machine: the last bind over it, or over a folder above it, decides."""
    for source, target in reversed(binds):
        if path == target or path.startswith(target.rstrip("/") + "/"):
            return source + path[len(target):]
    return path


def mount_points():
    with open("/proc/self/mountinfo", encoding="utf-8") as info:
        points = [line.split()[4].replace("\\040", " ") for line in info]
    return [p for p in dict.fromkeys(points) if not any(p == a or p.startswith(a + "/") for a in API_FILE_SYSTEMS)]


def namespace_setup(binds, hides):
    script = []
    for source, target in binds:
        script.append(f"mount --bind {shlex.quote(source)} {shlex.quote(target)}")
    for folder in hides:
        script.append(f"mount -t tmpfs -o ro,mode=0755 tmpfs {shlex.quote(folder)}")
    return script


def service(unit, instance, binds, hides):
    directives = service_section(unit, instance)
    one = lambda key, default=None: directives.get(key, [default])[-1]
    user = pwd.getpwnam(one("User"))
    group = grp.getgrnam(one("Group", user.pw_name))
    environment = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": user.pw_dir,
                   "USER": user.pw_name, "LOGNAME": user.pw_name, "SHELL": user.pw_shell}
    for assignments in directives.get("Environment", []):
        for assignment in shlex.split(assignments):
            key, _, value = assignment.partition("=")
            environment[key] = value
    for path in directives.get("EnvironmentFile", []):
        optional = path.startswith("-")
        # Read where the namespace will find it: in a bound file or folder, its source.
        path = outside(path.lstrip("-"), binds)
        if optional and not os.path.exists(path):
            continue
        environment.update(environment_file(path))
    script = namespace_setup(binds, hides)
    states = ["/var/lib/" + name for value in directives.get("StateDirectory", []) for name in value.split()]
    if states:
        environment["STATE_DIRECTORY"] = ":".join(states)
    if one("ProtectHome") not in (None, "no"):
        if one("ProtectHome") != "yes":
            fail("only ProtectHome=yes is emulated")
        for home in ("/home", "/root", "/run/user"):
            if os.path.isdir(home):
                script.append(f"mount -t tmpfs -o ro,mode=0755 tmpfs {home}")
    if one("ProtectSystem") not in (None, "no"):
        if one("ProtectSystem") != "strict":
            fail("only ProtectSystem=strict is emulated")
        bound = {target for _, target in binds}
        for point in mount_points():
            if point not in bound:
                script.append(f"mount -o remount,bind,ro {shlex.quote(point)}")
    if one("PrivateTmp") == "yes":
        script += ["mount -t tmpfs -o mode=1777 tmpfs /tmp", "mount -t tmpfs -o mode=1777 tmpfs /var/tmp"]
    mode = one("StateDirectoryMode", "0755")
    for state in states:
        # systemd creates the folder and gives it to the service user; here it must be a bound folder, writable.
        if state not in {target for _, target in binds}:
            fail(f"bind a folder over the state directory {state} (--bind DIR:{state})")
        script.append(f"chown {user.pw_uid}:{group.gr_gid} {state} && chmod {mode} {state}")
    script.append(f"cd {shlex.quote(one('WorkingDirectory', '/'))}")
    script.append(f"umask {one('UMask', '0022')}")
    limit = one("LimitNOFILE")
    if limit:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard != resource.RLIM_INFINITY and hard < int(limit):
            # systemd raises the hard limit too; a process without CAP_SYS_RESOURCE (a container) cannot.
            print(f"unit_sandbox: LimitNOFILE={limit} above this machine's hard limit {hard}: using {hard}", file=sys.stderr)
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        else:
            resource.setrlimit(resource.RLIMIT_NOFILE, (int(limit), int(limit)))
    setpriv = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={group.gr_gid}", "--init-groups"]
    if one("NoNewPrivileges") == "yes":
        setpriv.append("--no-new-privs")
    if "CapabilityBoundingSet" in directives:
        if one("CapabilityBoundingSet") != "":
            fail("only an empty CapabilityBoundingSet= is emulated")
        setpriv += ["--bounding-set=-all", "--inh-caps=-all"]
    command = shlex.split(one("ExecStart"))
    env = ["env", "-i"] + [f"{key}={value}" for key, value in sorted(environment.items())]
    script.append("exec " + shlex.join(setpriv + ["--"] + env + command))
    enter(script)


def enter(script):
    os.execvp("unshare", ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-ec",
                          "\n".join(script)])


def main(arguments):
    if not arguments or arguments[0] not in ("service", "run"):
        fail(__doc__)
    mode, rest = arguments[0], arguments[1:]
    binds, hides, positional = [], [], []
    while rest:
        word = rest.pop(0)
        if word == "--bind":
            source, _, target = rest.pop(0).partition(":")
            binds.append((os.path.abspath(source), target))
        elif word == "--hide":
            hides.append(rest.pop(0))
        elif word == "--":
            positional += rest
            break
        else:
            positional.append(word)
    if mode == "service":
        if len(positional) != 2:
            fail("usage: unit_sandbox.py service UNIT_FILE INSTANCE [--bind SRC:DST]... [--hide DIR]...")
        service(positional[0], positional[1], binds, hides)
    else:
        if not positional:
            fail("usage: unit_sandbox.py run [--bind SRC:DST]... [--hide DIR]... -- COMMAND...")
        enter(namespace_setup(binds, hides) + ["exec " + shlex.join(positional)])


if __name__ == "__main__":
    main(sys.argv[1:])
