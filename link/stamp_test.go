package link

import (
	"net"
	"testing"
	"time"
)

// TestReadStampedIsArrivalTime: the calibration's rate flood times each
// datagram by its arrival, not by when its reader got to it. Read when
// the reader ran, a reader held back by a busy machine (both receivers
// in one process) made the flood's slope 11% slow both ways at once and
// failed a study's 3g link as off its spec (768k measured 684k).
func TestReadStampedIsArrivalTime(t *testing.T) {
	rx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	stampArrivals(rx)
	tx, err := net.DialUDP("udp4", nil, rx.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	b, oob := make([]byte, 64), make([]byte, 128)
	// The kernel switches its stamping on a moment after the first socket
	// asks (from a work queue): wait for a stamped datagram, a guard.
	for deadline := time.Now().Add(time.Minute); ; {
		if _, err := tx.Write([]byte("warm")); err != nil {
			t.Fatal(err)
		}
		rx.SetReadDeadline(time.Now().Add(time.Minute))
		_, _, stamped, err := readStamped(rx, b, oob)
		if err != nil {
			t.Fatal(err)
		}
		if stamped {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no datagram stamped by the kernel in a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
	const n = 10
	sent := time.Now()
	for range n {
		if _, err := tx.Write([]byte("probe")); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(20 * time.Millisecond) // the reader, held back
	read := time.Now()
	for i := range n {
		rx.SetReadDeadline(time.Now().Add(time.Minute))
		_, at, _, err := readStamped(rx, b, oob)
		if err != nil {
			t.Fatal(err)
		}
		if at.Before(sent.Add(-time.Second)) || !at.Before(read) {
			t.Fatalf("datagram %d: stamped %v after the send, %v after the read began: want its arrival, before the read", i, at.Sub(sent), at.Sub(read))
		}
	}
}
