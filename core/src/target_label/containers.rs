//! `docker run` and `podman run`: where the image is among the options.
//!
//! Every option that takes a value is skipped with its value, from the full option tables
//! of both tools (docker CLI 28 `docker container run --help`, and podman 5's
//! `podman-run(1)` and its option files, deprecated and hidden aliases included), so a
//! value such as `--ip 10.0.0.1` is never taken for the image. Options are parsed as both
//! tools parse them (spf13/pflag): `--opt=value`, `--opt value`, a short option's value
//! attached (`-p8080:80`) or next, and short options grouped (`-it`, `-ite KEY=v`), where
//! an option that takes a value ends the group.

/// Long options of `docker run` and `podman run` that take a value.
const LONG_VALUES: &[&str] = &[
    // docker and podman
    "--add-host",
    "--annotation",
    "--attach",
    "--blkio-weight",
    "--blkio-weight-device",
    "--cap-add",
    "--cap-drop",
    "--cgroup-parent",
    "--cgroupns",
    "--cidfile",
    "--cpu-period",
    "--cpu-quota",
    "--cpu-rt-period",
    "--cpu-rt-runtime",
    "--cpu-shares",
    "--cpus",
    "--cpuset-cpus",
    "--cpuset-mems",
    "--detach-keys",
    "--device",
    "--device-cgroup-rule",
    "--device-read-bps",
    "--device-read-iops",
    "--device-write-bps",
    "--device-write-iops",
    "--dns",
    "--dns-opt",
    "--dns-option",
    "--dns-search",
    "--entrypoint",
    "--env",
    "--env-file",
    "--expose",
    "--gpus",
    "--group-add",
    "--health-cmd",
    "--health-interval",
    "--health-retries",
    "--health-start-period",
    "--health-timeout",
    "--hostname",
    "--ip",
    "--ip6",
    "--ipc",
    "--kernel-memory",
    "--label",
    "--label-file",
    "--link-local-ip",
    "--log-driver",
    "--log-opt",
    "--mac-address",
    "--memory",
    "--memory-reservation",
    "--memory-swap",
    "--memory-swappiness",
    "--mount",
    "--name",
    "--net",
    "--network",
    "--network-alias",
    "--oom-score-adj",
    "--pid",
    "--pids-limit",
    "--platform",
    "--publish",
    "--pull",
    "--restart",
    "--security-opt",
    "--shm-size",
    "--stop-signal",
    "--stop-timeout",
    "--sysctl",
    "--tmpfs",
    "--ulimit",
    "--user",
    "--userns",
    "--uts",
    "--volume",
    "--volumes-from",
    "--workdir",
    // docker only
    "--cpu-count",
    "--cpu-percent",
    "--domainname",
    "--health-start-interval",
    "--io-maxbandwidth",
    "--io-maxiops",
    "--isolation",
    "--link",
    "--net-alias",
    "--runtime",
    "--storage-opt",
    "--volume-driver",
    // podman only
    "--arch",
    "--authfile",
    "--cert-dir",
    "--cgroup-conf",
    "--cgroups",
    "--chrootdirs",
    "--conmon-pidfile",
    "--creds",
    "--decryption-key",
    "--env-merge",
    "--gidmap",
    "--group-entry",
    "--health-log-destination",
    "--health-max-log-count",
    "--health-max-log-size",
    "--health-on-failure",
    "--health-startup-cmd",
    "--health-startup-interval",
    "--health-startup-retries",
    "--health-startup-success",
    "--health-startup-timeout",
    "--hosts-file",
    "--hostuser",
    "--image-volume",
    "--init-path",
    "--os",
    "--passwd-entry",
    "--personality",
    "--pidfile",
    "--pod",
    "--pod-id-file",
    "--preserve-fd",
    "--preserve-fds",
    "--rdt-class",
    "--requires",
    "--retry",
    "--retry-delay",
    "--sdnotify",
    "--seccomp-policy",
    "--secret",
    "--shm-size-systemd",
    "--signature-policy",
    "--subgidname",
    "--subuidname",
    "--systemd",
    "--timeout",
    "--tz",
    "--uidmap",
    "--umask",
    "--unsetenv",
    "--variant",
];

/// Short options that take a value (`-a`, `-c`, `-e`, `-h`, `-l`, `-m`, `-p`, `-u`, `-v`,
/// `-w` in both tools); the others (`-d`, `-i`, `-t`, `-P`, `-q`) are flags.
const SHORT_VALUES: &[u8] = b"acehlmpuvw";

/// Where the image is in `args` (the words after `run`), and whether podman's `--rootfs`
/// made it a root filesystem path instead.
pub(super) fn image(args: &[&str]) -> Option<(usize, bool)> {
    let mut rootfs = false;
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "--" {
            return (i + 1 < args.len()).then_some((i + 1, rootfs));
        }
        if let Some(long) = a.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            rootfs |= name == "rootfs";
            let takes = !long.contains('=') && LONG_VALUES.contains(&a);
            i += if takes { 2 } else { 1 };
            continue;
        }
        if let Some(shorts) = a.strip_prefix('-').filter(|s| !s.is_empty()) {
            // The first option that takes a value ends the group; its value is the rest of
            // the word, or the next word when the group ends with it.
            let b = shorts.as_bytes();
            let next = b
                .iter()
                .position(|c| SHORT_VALUES.contains(c))
                .is_some_and(|at| at + 1 == b.len());
            i += if next { 2 } else { 1 };
            continue;
        }
        return Some((i, rootfs));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::image;

    #[test]
    fn values_are_never_the_image() {
        for (line, at) in [
            ("--ip 10.0.0.1 img", 2),
            ("-it --rm img", 2),
            ("-ite KEY=v img", 2),
            ("-ieKEY=v img", 1),
            ("-p8080:80 -v /a:/b img", 3),
            ("--network=host --pull never img", 3),
            ("--pod mypod --tz UTC --secret s img cmd", 6),
            ("-- img", 1),
        ] {
            let args: Vec<&str> = line.split(' ').collect();
            assert_eq!(image(&args), Some((at, false)), "{line}");
        }
        assert_eq!(image(&["--rootfs", "/srv/root"]), Some((1, true)));
        assert_eq!(image(&["--rm", "-i"]), None);
    }
}
