// Package capacity answers "how much load does this server carry within
// my SLO?": the highest open-loop rate whose latency percentiles (from
// the intended send time) and error rate meet the SLO, judged only on
// steps in which the client kept up.
//
// It is a layer above the load engine: Search proposes rates (growth by
// a factor until a step fails, then geometric bisection to a precision),
// a StepFunc measures each (EngineStep: load.Run in open loop, warm-up
// then a fresh measured window), and judge decides each step — pass,
// fail (the server missed the SLO after the send, or errored), or client
// (the client's CPU, schedule or worker count was the limit: the step says
// nothing of the server). The result is a results.Capacity. See
// docs/capacity.md.
package capacity
