# SPDX-License-Identifier: Apache-2.0
"""doctor on this machine (issue #3): every answer is compared with the
machine itself (files, sysctls, the CUDA tree, the dynamic linker cache),
tracefs in both states through a private mount and an empty root, NVML
through the fake library, and an unprivileged run.

The document is the contract's closed CapabilityReport (issue #9): our own
checks are folded into the detail of the contract check each refines, as
"; <name>: <status> (<detail>)", and the human view lists every check,
capability and environment fact; the tests check both and that they agree.
The NVIDIA branches assert on either kind of machine: without a driver
here, with one on a GPU machine."""
import glob
import os
import platform
import re
import subprocess

from proc_helpers import other_user_xprobe
from target_helpers import NOBODY, fx, private_tracefs, run_as

REF_CHECKS = ["btf", "ebpf_permissions", "kernel_lockdown", "perf_event_paranoid", "ptrace_scope",
              "nvidia_driver", "cuda_driver", "cuda_toolkit", "cupti"]
OUR_CHECKS = ["bpf_probe", "perf_event_open", "unprivileged_bpf", "tracefs", "nvml"]
# where each of ours is reported in JSON
FOLDED_INTO = {"bpf_probe": "ebpf_permissions", "unprivileged_bpf": "ebpf_permissions",
               "tracefs": "ebpf_permissions", "perf_event_open": "perf_event_paranoid",
               "nvml": "nvidia_driver"}
REF_CAPS = ["uprobe", "uretprobe", "tracepoint", "cuda_callback", "cuda_activity",
            "runtime_injection"]
REF_ENV = ["operating_system", "architecture", "kernel_release", "effective_uid", "container",
           "pid_namespace"]


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


def human(xprobe, env=None):
    """(every check as (status, detail), capability yes/no, other lines)."""
    r = xprobe.run("doctor", json_mode=False, env=env)
    assert r.rc == 0 and r.stderr == "", r
    checks, caps = {}, {}
    for line in r.stdout.splitlines():
        parts = line.split(None, 2)
        if line.startswith("  ") and parts and parts[0] in REF_CHECKS + OUR_CHECKS:
            checks[parts[0]] = (parts[1], parts[2] if len(parts) > 2 else "")
    text = r.stdout.replace("\n  CUDA", " CUDA")
    m = re.search(r"^capabilities: (.*)$", text, re.M)
    for item in m.group(1).split(", "):
        name, value = item.rsplit(" ", 1)
        caps[name] = value == "yes"
    return checks, caps, r.stdout


def ours(d, name):
    """(status, detail) of one of our checks, from the contract check's
    detail it is folded into."""
    detail = d["checks"][FOLDED_INTO[name]]["detail"]
    m = re.search(r"(?:^|; )%s: (\w+)(?: \((.*?)\))?(?=; [a-z_]+: |$)" % name, detail)
    assert m, (name, detail)
    return m.group(1), m.group(2) or ""


def test_checks_and_environment_match_the_machine(xprobe):
    d = doctor(xprobe)
    # exactly the contract's keys, in its order
    assert list(d) == ["schema_version", "ok", "capabilities", "environment", "checks",
                       "warnings"]
    assert list(d["checks"]) == REF_CHECKS
    assert list(d["capabilities"]) == REF_CAPS
    assert list(d["environment"]) == REF_ENV
    c = d["checks"]
    env = d["environment"]
    assert env["operating_system"] == "linux"
    assert env["architecture"] == platform.machine()
    assert env["kernel_release"] == read("/proc/sys/kernel/osrelease")
    assert env["effective_uid"] == os.geteuid() == 0
    assert env["pid_namespace"] == os.readlink("/proc/self/ns/pid")
    if os.path.exists("/.dockerenv"):
        assert env["container"] == "docker"
    with open("/proc/self/status") as f:
        capeff = [l.split()[1] for l in f if l.startswith("CapEff:")][0]

    assert c["btf"]["status"] == ("available" if os.path.exists("/sys/kernel/btf/vmlinux")
                                  else "unavailable")
    assert c["ebpf_permissions"]["status"] == "available"
    assert ("CapEff 0x%s" % capeff) in c["ebpf_permissions"]["detail"]
    assert ("user_namespace: %s" % os.readlink("/proc/self/ns/user")) in \
        c["ebpf_permissions"]["detail"]
    assert ("mount_namespace: %s" % os.readlink("/proc/self/ns/mnt")) in \
        c["ptrace_scope"]["detail"]
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
    status, detail = ours(d, "unprivileged_bpf")
    assert status == ("available" if ubpf == 0 else "restricted")
    assert detail.startswith(str(ubpf))
    # the real probes work as root
    assert ours(d, "bpf_probe")[0] == "available"
    assert ours(d, "perf_event_open")[0] == "available"
    caps = d["capabilities"]
    lockdown_ok = c["kernel_lockdown"]["status"] != "restricted"
    assert caps["uprobe"] == caps["uretprobe"] == caps["tracepoint"] == lockdown_ok
    assert caps["runtime_injection"] is (platform.machine() == "x86_64")

    # the human view: every check of ours as JSON reports it, our
    # capabilities and the environment facts the contract has no field for
    hchecks, hcaps, text = human(xprobe)
    assert list(hchecks) == REF_CHECKS + OUR_CHECKS
    for name in OUR_CHECKS:
        assert hchecks[name] == ours(d, name), name
    for name in REF_CHECKS:
        assert hchecks[name][0] == c[name]["status"]
        assert c[name]["detail"].startswith(hchecks[name][1]), name
    assert hcaps["usdt"] == hcaps["uprobe"] == caps["uprobe"]
    assert hcaps["named tracepoint"] == (caps["tracepoint"] and
                                         ours(d, "tracefs")[0] == "available")
    assert hcaps["cpu sampling"] is (ours(d, "perf_event_open")[0] == "available")
    assert ("kernel %s; CapEff %s\n" % (platform.version(), capeff)) in text
    assert ("%s, %s, %s" % (os.readlink("/proc/self/ns/pid"), os.readlink("/proc/self/ns/mnt"),
                            os.readlink("/proc/self/ns/user"))) in text
    if os.path.exists("/.dockerenv"):
        assert "container hint: /.dockerenv exists\n" in text


def cupti_on_this_machine(ldconfig):
    """{major: path} of every supported CUPTI on disk or in the cache."""
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
    return expected


def test_nvidia_cuda_cupti_on_this_machine(xprobe):
    d = doctor(xprobe)
    c = d["checks"]
    codes = [w["code"] for w in d["warnings"]]
    proc_version = read("/proc/driver/nvidia/version")
    nvml_status, nvml_detail = ours(d, "nvml")
    if proc_version is None:
        assert c["nvidia_driver"]["status"] in ("unavailable", "restricted")
        assert nvml_status in ("unavailable", "restricted")
        assert "NVIDIA_DRIVER_UNAVAILABLE" in codes
    else:
        # a GPU machine: the driver's own first line, and NVML loaded from
        # the driver reports the same version
        assert c["nvidia_driver"]["status"] == "available"
        assert c["nvidia_driver"]["detail"].startswith(proc_version.splitlines()[0])
        assert "NVIDIA_DRIVER_UNAVAILABLE" not in codes
        version = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", proc_version)
        assert version, proc_version
        assert nvml_status == "available", nvml_detail
        assert ("(driver %s)" % version.group(1)) in nvml_detail
    ldconfig = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    if "libcuda.so" not in ldconfig and not os.path.exists("/usr/lib/wsl/lib/libcuda.so.1"):
        assert c["cuda_driver"]["status"] == "unavailable"
        assert c["cuda_driver"]["detail"] == "libcuda.so not found in the dynamic linker cache"
    elif c["nvidia_driver"]["status"] == "available":
        assert c["cuda_driver"]["status"] == "available"
        path = c["cuda_driver"]["detail"].split("libcuda.so found: ", 1)[1]
        assert os.path.basename(path).startswith("libcuda.so") and os.path.exists(path)
    else:
        assert c["cuda_driver"]["status"] == "restricted"
        assert "but the NVIDIA runtime is unavailable" in c["cuda_driver"]["detail"]
    cuda_ok = all(c[k]["status"] == "available" for k in ("nvidia_driver", "cuda_driver", "cupti"))
    assert d["capabilities"]["cuda_callback"] is cuda_ok
    assert d["capabilities"]["cuda_activity"] is cuda_ok
    # CUPTI: every supported major on disk or in the cache is listed with
    # its path in the detail (there is no other field for it)
    expected = cupti_on_this_machine(ldconfig)
    if expected:
        assert c["cupti"]["status"] == "available"
        assert "CUPTI_NOT_AVAILABLE" not in codes
        assert c["cupti"]["detail"] == "; ".join(
            "CUDA %d: %s" % (m, p) for m, p in sorted(expected.items()))
    else:
        assert c["cupti"]["status"] == "unavailable"
        assert "CUPTI_NOT_AVAILABLE" in codes
    nvcc = [p for p in ["/usr/local/cuda/bin/nvcc"] + glob.glob("/usr/local/cuda-*/bin/nvcc")
            if os.access(p, os.X_OK)]
    if nvcc:
        assert c["cuda_toolkit"]["status"] == "available"
        ver = subprocess.run([nvcc[0], "--version"], capture_output=True, text=True).stdout
        release = ver.split("release ")[1].split(",")[0]
        assert "CUDA %s" % release in c["cuda_toolkit"]["detail"]
    else:
        assert c["cuda_toolkit"]["status"] in ("available", "unavailable")
        assert c["cuda_toolkit"]["detail"]


def test_tracefs_states(xprobe, tmp_path):
    env = dict(os.environ, XPROBE_TRACEFS_ROOT=str(tmp_path))
    d = doctor(xprobe, env=env)
    status, detail = ours(d, "tracefs")
    assert status == "unavailable"
    assert "mount -t tracefs none /sys/kernel/tracing" in detail
    w = [w for w in d["warnings"] if w["code"] == "TRACEFS_NOT_MOUNTED"]
    assert w and w[0]["details"] == {"hint": "mount -t tracefs none /sys/kernel/tracing",
                                     "tracefs_root": str(tmp_path)}
    _, caps, text = human(xprobe, env=env)
    assert caps["named tracepoint"] is False
    assert ("tracefs root: %s\n" % tmp_path) in text
    with private_tracefs() as root:
        env = dict(os.environ, XPROBE_TRACEFS_ROOT=root)
        d = doctor(xprobe, env=env)
        assert ours(d, "tracefs") == ("available", "mounted at " + root)
        assert "TRACEFS_NOT_MOUNTED" not in [w["code"] for w in d["warnings"]]
        _, caps, _ = human(xprobe, env=env)
        assert caps["named tracepoint"] is d["capabilities"]["tracepoint"]


def test_nvml_through_the_fake_library(xprobe):
    env = dict(os.environ, XPROBE_NVML_LIBRARY=fx("libtarget_fakenvml.so"))
    d = doctor(xprobe, env=env)
    status, detail = ours(d, "nvml")
    assert status == "available"
    assert "999.99.99-fake" in detail
    assert d["checks"]["nvidia_driver"]["status"] == "available"
    env["XPROBE_FAKE_NVML_FAIL"] = "noperm"
    d = doctor(xprobe, env=env)
    assert ours(d, "nvml")[0] == "restricted"


def test_unprivileged_doctor(xprobe):
    # a copy nobody can run: the build tree may be where nobody cannot enter
    with other_user_xprobe(xprobe) as (xp, _):
        r = run_as(xp, NOBODY, "doctor")
    assert r.rc == 0, r
    d = r.doc
    assert d["environment"]["effective_uid"] == NOBODY
    assert d["checks"]["ebpf_permissions"]["status"] == "restricted"
    assert ours(d, "bpf_probe")[0] in ("restricted", "unavailable")
    assert d["capabilities"]["uprobe"] is False
    assert d["warnings"][0] == {"code": "BPF_PERMISSION_MISSING", "details": {},
                                "message": "The current process cannot attach eBPF probes."}
    # tracefs is mounted (the suite mounts it) but root's, mode 0700: the
    # cause is permission, not absence, and no advice to mount it again
    assert os.path.isdir("/sys/kernel/tracing/events")
    status, detail = ours(d, "tracefs")
    assert status == "restricted", detail
    assert "not readable by uid %d" % NOBODY in detail and "not mounted" not in detail
    codes = [w["code"] for w in d["warnings"]]
    assert "TRACEFS_NOT_MOUNTED" not in codes and "TRACEFS_NOT_READABLE" in codes


def test_human_summary(xprobe):
    r = xprobe.run("doctor", json_mode=False)
    assert r.rc == 0 and r.stderr == ""
    assert r.stdout.startswith("xprobe doctor: linux ")
    for name in REF_CHECKS + OUR_CHECKS:
        assert "  %s " % name in r.stdout
