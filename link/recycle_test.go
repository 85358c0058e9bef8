package link

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestWriterReturnsBatchesWhileTheyWait: the writer hands the reader's
// batches back as soon as it has copied their packets out, not when it
// next writes. Packets due an hour from now are handed over in 300
// batches (more than the old pool of 64 kept); all 300 batches must come
// back to the recycler while the packets still wait, so that a reader
// feeding a delayed link reuses them instead of allocating more.
func TestWriterReturnsBatchesWhileTheyWait(t *testing.T) {
	null, err := unix.Open("/dev/null", unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(null)
	p := newPump(NewPipe(Spec{}, false), -1, null, false, time.Now(), false, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // write sets the thread's timer slack: never unlocked, the thread ends with it
		p.write()
	}()
	defer func() { p.stop(); <-done }()
	r := p.newReader()
	const batches = 300
	// The writer may hand batches back while the loop still hands
	// them over, and the reader reuses those: count the distinct ones.
	handed := map[*packet]bool{}
	for range batches {
		pb := r.free.pbuf(false)
		pb.n, pb.refs = smallBufLen, 1
		r.batch = append(r.batch, packet{at: time.Hour, pb: pb, a: 0, b: 1, bytes: 64})
		handed[&r.batch[0]] = true
		if !r.flush() {
			t.Fatal("the pump stopped")
		}
	}
	want := len(handed)
	if handed[&r.batch[:1][0]] {
		want-- // the reader holds it again, empty
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.free.mu.Lock()
		n := len(p.free.batches) + len(r.free.batches)
		p.free.mu.Unlock()
		if n >= want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d batches back with the reader while their packets wait", n, want)
		}
		time.Sleep(time.Millisecond)
	}
	// The reader takes them all again: none allocated.
	for i := range want {
		b := r.free.batch()
		if !handed[&b[:1][0]] {
			t.Fatalf("batch %d: a new one, not one returned (the reader's list has %d)", i, len(r.free.batches))
		}
	}
}

// TestFIFOStaysBounded: a queue that never empties (a flood into a
// delay: packets in at the rate they leave) keeps an array the size of
// what it holds, not of all that went through it.
func TestFIFOStaysBounded(t *testing.T) {
	var f pktFIFO
	batch := make([]packet, 16)
	for i := range batch {
		batch[i].bytes = 1
	}
	for range 10000 { // 160,000 packets through, 2,000 or so held
		f.push(batch)
		for f.len() > 2000 {
			if f.peek().bytes != 1 {
				t.Fatal("a packet lost its contents")
			}
			f.pop()
		}
	}
	if f.len() != 2000 {
		t.Fatalf("holds %d, want 2000", f.len())
	}
	if c := cap(f.q); c > 8*2000 {
		t.Fatalf("the queue's array holds %d packets for the 2,000 waiting", c)
	}
}
