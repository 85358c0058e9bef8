// Package testkit is what tests share to reach the world outside the
// process: peer tools (NeedTool, with one rule for CI), the wirebench
// binary built once per test process (Binary), child processes started in
// their own process group and stopped with it (Start), listeners handed
// over already bound (Listen, ListenerFile, RefusedAddr), real peers
// (StartRedis, StartNginx, StartPythonHTTP), and the switches for the
// quiet CI step (Timing, Peers).
//
// No helper here picks a free port and releases it for someone else to
// bind: another test can take the port in between. A peer that can
// inherit a socket gets it bound (nginx, python); redis-server cannot, so
// StartRedis retries on a taken port and checks that the server answering
// is the process it started.
//
// See docs/testing.md for the switches and the CI steps.
package testkit
