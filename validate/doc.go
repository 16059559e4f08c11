// Package validate measures the real Linux XDP receive path, so that rxsim's
// model can be tied to a kernel.
//
// It builds XDP programs with github.com/cilium/ebpf/asm (no C toolchain):
// drop, pass, tx (swap MACs) and redirect-cpu into a BPF_MAP_TYPE_CPUMAP
// (program modes no-touch, round-robin and l4-hash, optional program on the
// cpumap entry). Each counts packets and bytes in a per-CPU array. A harness
// creates two network namespaces joined by a veth pair (or attaches to a
// real interface with Options.Iface and only measures), drives traffic with
// generators pinned to a CPU (BPF_PROG_RUN live frames, AF_PACKET sendmmsg,
// UDP sendmmsg), and reads the kernel's own counters alongside its
// programs': softnet_stat, /proc/net/snmp of the receiving namespace,
// /proc/stat, interface statistics and veth's ethtool statistics. A separate
// probe run attaches raw tracepoints (napi_poll, xdp_cpumap_enqueue,
// xdp_cpumap_kthread) for internals; rates come from probe-free runs.
//
// Run is the entry point; CLI implements `rxsim validate`; Configs lists the
// built-in validation configurations; Cleanup removes what a killed run left.
//
// Left out: AF_XDP, devmap redirect, multi-queue veth, TCP generators, the
// simulation side of `rxsim validate SCENARIO` and calibration (other
// packages). napi_poll is counted for every NAPI on the machine, not only the
// veth's.
package validate
