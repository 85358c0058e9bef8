// Package link emulates a network link between a load client and the
// servers it measures: one-way delay and jitter, a rate per direction,
// a drop-tail queue, random and bursty (Gilbert-Elliott) loss.
//
// The design is Mahimahi's: packets are relayed in user space between
// two network namespaces joined by TUN devices, so both ends run the
// kernel's own TCP and QUIC stacks unchanged and only the link is
// emulated. Nothing here needs netem.
//
// The package has three layers:
//
//   - Spec and Parse: the --link SPEC language and its named presets
//     (spec.go, presets.go);
//   - Pipe: one direction of the link as a pure function of arrival time
//     and packet size, with a seeded RNG, testable without root
//     (pipe.go, loss.go);
//   - the relay: namespaces, TUN devices and the packet pumps that apply
//     a Pipe to each packet each way, and the calibration that measures
//     what link was obtained (relay.go, netns.go, netlink.go,
//     calibrate.go). It needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN).
package link
