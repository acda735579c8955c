/* SPDX-License-Identifier: Apache-2.0 */
/*
 * link_release.h - leave the kernel's detach waits to a child process.
 *
 * Since Linux 6.13 the kernel waits an RCU tasks-trace grace period when a
 * uprobe goes (about 40 ms on 6.18 for a uprobe_multi link, 100 ms for a
 * perf-event uprobe), and a BPF link on a tracepoint waits out its own
 * grace periods too.  A process cannot exit before its last close of such
 * a descriptor returns, so a `measure --samples 1` whose answer took 20 ms
 * would spend most of its life detaching.
 *
 * xp_link_release_to_child(), called once the answer is written: a child
 * (fork; "xprobe-release" in ps) keeps this process's BPF links and perf
 * events -- the descriptors that hold probes -- and nothing else (its
 * standard streams on /dev/null, every other inherited descriptor closed
 * first), closes them and exits.  This process then frees its objects as
 * usual: each close is no longer the last reference, so it returns at
 * once, and the process exits.  A reader of xprobe's output sees its end
 * when xprobe exits.
 *
 * While the child's closes run, the probes stay in the target with their
 * programs disarmed (the collectors clear `armed` before they stop, and
 * libbpf disables a perf event before closing it): a trap and an early
 * return per call, for at most the kernel's wait.  If xprobe or the child
 * is killed, the kernel closes the descriptors as at any exit.
 *
 * The descriptors are found by their /proc/self/fd link ("anon_inode:
 * bpf_link", "anon_inode:[perf_event]"), collected before the fork: the
 * child only makes async-signal-safe calls.
 */
#ifndef XP_LIVE_LINK_RELEASE_H
#define XP_LIVE_LINK_RELEASE_H

/*
 * Hand this process's links to a child as above.  Returns the number of
 * descriptors handed over (0: none held, nothing done), or -errno when no
 * child could be made (the caller's closes then wait as before).
 */
int xp_link_release_to_child(void);

#endif /* XP_LIVE_LINK_RELEASE_H */
