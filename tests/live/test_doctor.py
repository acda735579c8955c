# SPDX-License-Identifier: Apache-2.0
"""doctor on this machine (issue #3): every answer is compared with the
machine itself (files, sysctls, the CUDA tree, the dynamic linker cache),
tracefs in both states through a private mount and an empty root, NVML
through the fake library, and an unprivileged run."""
import glob
import os
import platform
import subprocess

from proc_helpers import other_user_xprobe
from target_helpers import NOBODY, fx, private_tracefs, run_as

REF_CHECKS = ["btf", "ebpf_permissions", "kernel_lockdown", "perf_event_paranoid", "ptrace_scope",
              "nvidia_driver", "cuda_driver", "cuda_toolkit", "cupti"]
OUR_CHECKS = ["bpf_probe", "perf_event_open", "unprivileged_bpf", "tracefs", "nvml"]


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def doctor(xprobe, env=None):
    r = xprobe.run("doctor", env=env)
    assert r.rc == 0 and r.stderr == "", r
    assert r.doc["ok"] is True
    return r.doc


def test_checks_and_environment_match_the_machine(xprobe):
    d = doctor(xprobe)
    assert list(d["checks"]) == REF_CHECKS + OUR_CHECKS
    c = d["checks"]
    env = d["environment"]
    assert env["operating_system"] == "linux"
    assert env["architecture"] == platform.machine()
    assert env["kernel_release"] == read("/proc/sys/kernel/osrelease")
    assert env["effective_uid"] == os.geteuid() == 0
    assert env["pid_namespace"] == os.readlink("/proc/self/ns/pid")
    assert env["mount_namespace"] == os.readlink("/proc/self/ns/mnt")
    with open("/proc/self/status") as f:
        capeff = [l.split()[1] for l in f if l.startswith("CapEff:")][0]
    assert env["effective_capabilities"] == capeff
    if os.path.exists("/.dockerenv"):
        assert env["container"] == "docker"
        assert "/.dockerenv exists" in env["container_hints"]

    assert c["btf"]["status"] == ("available" if os.path.exists("/sys/kernel/btf/vmlinux")
                                  else "unavailable")
    assert c["ebpf_permissions"]["status"] == "available"
    lock = read("/sys/kernel/security/lockdown")
    if lock is None:
        assert c["kernel_lockdown"]["status"] == "unknown"
    else:
        assert c["kernel_lockdown"]["status"] == ("available" if "[none]" in lock else "restricted")
    par = int(read("/proc/sys/kernel/perf_event_paranoid"))
    assert c["perf_event_paranoid"]["status"] == ("available" if par <= 1 else "restricted")
    assert c["perf_event_paranoid"]["detail"].startswith(str(par))
    yama = read("/proc/sys/kernel/yama/ptrace_scope")
    assert c["ptrace_scope"]["status"] == ("unknown" if yama is None else
                                           "available" if int(yama) == 0 else "restricted")
    ubpf = int(read("/proc/sys/kernel/unprivileged_bpf_disabled"))
    assert c["unprivileged_bpf"]["status"] == ("available" if ubpf == 0 else "restricted")
    assert c["unprivileged_bpf"]["detail"].startswith(str(ubpf))
    # the real probes work as root
    assert c["bpf_probe"]["status"] == "available"
    assert c["perf_event_open"]["status"] == "available"
    caps = d["capabilities"]
    lockdown_ok = c["kernel_lockdown"]["status"] != "restricted"
    assert caps["uprobe"] == caps["uretprobe"] == caps["tracepoint"] == caps["usdt"] == lockdown_ok
    assert caps["cpu_sampling"] is True
    assert caps["runtime_injection"] is (platform.machine() == "x86_64")


def test_nvidia_cuda_cupti_on_this_machine(xprobe):
    d = doctor(xprobe)
    c = d["checks"]
    has_driver = os.path.exists("/proc/driver/nvidia/version")
    if not has_driver:
        assert c["nvidia_driver"]["status"] in ("unavailable", "restricted")
        assert c["nvml"]["status"] == "unavailable"
        codes = [w["code"] for w in d["warnings"]]
        assert "NVIDIA_DRIVER_UNAVAILABLE" in codes
        assert d["capabilities"]["cuda_callback"] is False
        assert d["capabilities"]["cuda_activity"] is False
    ldconfig = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    if "libcuda.so" not in ldconfig:
        assert c["cuda_driver"]["status"] == "unavailable"
    # CUPTI: every supported major on disk or in the cache is listed with its path
    expected = {}
    for line in ldconfig.splitlines():
        parts = line.split()
        if parts and parts[0] in ("libcupti.so.12", "libcupti.so.13"):
            expected.setdefault(int(parts[0].rsplit(".", 1)[1]), os.path.realpath(parts[-1]))
    for major in (12, 13):
        for root in ["/usr/local/cuda"] + sorted(glob.glob("/usr/local/cuda-%d*" % major)):
            for sub in ("extras/CUPTI/lib64", "targets/x86_64-linux/lib", "lib64", "lib"):
                p = os.path.join(root, sub, "libcupti.so.%d" % major)
                if os.path.exists(p):
                    expected.setdefault(major, os.path.realpath(p))
    got = {l["major"]: l["path"] for l in d["cupti_libraries"]}
    assert got == expected
    if expected:
        assert c["cupti"]["status"] == "available"
        for major, path in expected.items():
            assert "CUDA %d: %s" % (major, path) in c["cupti"]["detail"]
    else:
        assert c["cupti"]["status"] == "unavailable"
    nvcc = [p for p in ["/usr/local/cuda/bin/nvcc"] + glob.glob("/usr/local/cuda-*/bin/nvcc")
            if os.access(p, os.X_OK)]
    if nvcc:
        assert c["cuda_toolkit"]["status"] == "available"
        ver = subprocess.run([nvcc[0], "--version"], capture_output=True, text=True).stdout
        release = ver.split("release ")[1].split(",")[0]
        assert "CUDA %s" % release in c["cuda_toolkit"]["detail"]


def test_tracefs_states(xprobe, tmp_path):
    d = doctor(xprobe, env=dict(os.environ, XPROBE_TRACEFS_ROOT=str(tmp_path)))
    assert d["checks"]["tracefs"]["status"] == "unavailable"
    assert "mount -t tracefs none /sys/kernel/tracing" in d["checks"]["tracefs"]["detail"]
    assert d["capabilities"]["named_tracepoint"] is False
    w = [w for w in d["warnings"] if w["code"] == "TRACEFS_NOT_MOUNTED"]
    assert w and w[0]["details"] == {"hint": "mount -t tracefs none /sys/kernel/tracing"}
    assert d["environment"]["tracefs_root"] == str(tmp_path)
    with private_tracefs() as root:
        d = doctor(xprobe, env=dict(os.environ, XPROBE_TRACEFS_ROOT=root))
        assert d["checks"]["tracefs"] == {"status": "available", "detail": "mounted at " + root}
        assert d["capabilities"]["named_tracepoint"] is d["capabilities"]["tracepoint"]
        assert "TRACEFS_NOT_MOUNTED" not in [w["code"] for w in d["warnings"]]


def test_nvml_through_the_fake_library(xprobe):
    env = dict(os.environ, XPROBE_NVML_LIBRARY=fx("libtarget_fakenvml.so"))
    d = doctor(xprobe, env=env)
    assert d["checks"]["nvml"]["status"] == "available"
    assert "999.99.99-fake" in d["checks"]["nvml"]["detail"]
    assert d["checks"]["nvidia_driver"]["status"] == "available"
    env["XPROBE_FAKE_NVML_FAIL"] = "noperm"
    d = doctor(xprobe, env=env)
    assert d["checks"]["nvml"]["status"] == "restricted"


def test_unprivileged_doctor(xprobe):
    # a copy nobody can run: the build tree may be where nobody cannot enter
    with other_user_xprobe(xprobe) as (xp, _):
        r = run_as(xp, NOBODY, "doctor")
    assert r.rc == 0, r
    d = r.doc
    assert d["environment"]["effective_uid"] == NOBODY
    assert d["checks"]["ebpf_permissions"]["status"] == "restricted"
    assert d["checks"]["bpf_probe"]["status"] in ("restricted", "unavailable")
    assert d["capabilities"]["uprobe"] is False
    assert d["warnings"][0] == {"code": "BPF_PERMISSION_MISSING", "details": {},
                                "message": "The current process cannot attach eBPF probes."}


def test_human_summary(xprobe):
    r = xprobe.run("doctor", json_mode=False)
    assert r.rc == 0 and r.stderr == ""
    assert r.stdout.startswith("xprobe doctor: linux ")
    for name in REF_CHECKS + OUR_CHECKS:
        assert "  %s " % name in r.stdout
