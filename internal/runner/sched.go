package runner

import (
	"os"
	"syscall"
	"unsafe"
)

// Client threads run under SCHED_BATCH: the same CPU share as any other thread, but a client
// woken by the first part of a server's answer does not preempt that server while it is still
// writing the rest. Under the normal policy a 100-row range answer (two socket writes from
// PostgreSQL) often cost an extra pair of context switches on a machine the client shares with
// the server: measured on oltp_read_only's simple ranges, 2.3 instead of 3.3-3.7 switches per
// query machine-wide, and less client CPU per query than sysbench's 2.8, with the same p95 and p99
// latency at 4 and at 32 threads. Latency is taken when the whole answer has been read, which is
// when the server is done with it either way.
//
// FAIRBENCH_CLIENT_SCHED=normal keeps the normal policy, for comparing the two.

// Scheduling policies as the result records them.
const (
	SchedBatch  = "batch"
	SchedNormal = "normal"
)

// In <linux/sched.h>.
const (
	schedOther = 0
	schedBatch = 3
)

// clientScheduling is the policy the client threads are asked to run under.
func clientScheduling() string {
	if os.Getenv("FAIRBENCH_CLIENT_SCHED") == SchedNormal {
		return SchedNormal
	}
	return SchedBatch
}

// setThreadScheduling applies policy to the calling OS thread (the goroutine must be locked to
// it) and reports the policy it got.
func setThreadScheduling(policy string) string {
	kernelPolicy, got := schedBatch, SchedBatch
	if policy != SchedBatch {
		kernelPolicy, got = schedOther, SchedNormal
	}
	var priority int32 // sched_param.sched_priority, 0 for the non-realtime policies
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, 0, uintptr(kernelPolicy), uintptr(unsafe.Pointer(&priority)))
	if errno != 0 {
		return SchedNormal
	}
	return got
}

// preciseTimerSlack cuts the calling OS thread's timer slack from Linux's default 50 µs to 1 ns,
// so an open-loop client's sleeps end when asked (pacer.go). The thread is locked and dies with
// its goroutine, so the setting reaches nothing else.
func preciseTimerSlack() {
	const prSetTimerslack = 29 // <linux/prctl.h>
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerslack, 1, 0)
}
