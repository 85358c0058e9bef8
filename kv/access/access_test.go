package access

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

func TestBearer(t *testing.T) {
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	if !BearerOK(r, "") {
		t.Fatal("no token configured must accept")
	}
	if BearerOK(r, "s3cret") {
		t.Fatal("missing header accepted")
	}
	for h, want := range map[string]bool{"Bearer s3cret": true, "bearer s3cret": true, "Bearer s3cre": false, "Bearer s3cret2": false, "Basic s3cret": false, "s3cret": false, "Bearer ": false} {
		r.Header.Set("Authorization", h)
		if got := BearerOK(r, "s3cret"); got != want {
			t.Errorf("%q: got %v want %v", h, got, want)
		}
	}
}

func TestLimiter(t *testing.T) {
	if NewLimiter(0, 0) != nil || !(*Limiter)(nil).Allow("x") {
		t.Fatal("rate 0 must be no limiter, allowing all")
	}
	now := time.Unix(1000, 0)
	l := NewLimiter(10, 5)
	l.now = func() time.Time { return now }
	for i := range 5 {
		if !l.Allow("a") {
			t.Fatalf("burst: request %d refused", i)
		}
	}
	if l.Allow("a") {
		t.Fatal("6th request of a burst of 5 allowed")
	}
	if !l.Allow("b") {
		t.Fatal("another client shares a's bucket")
	}
	now = now.Add(100 * time.Millisecond) // one token at 10/s
	if !l.Allow("a") || l.Allow("a") {
		t.Fatal("refill: want exactly one token after 100 ms")
	}
	now = now.Add(time.Hour)
	n := 0
	for l.Allow("a") {
		n++
	}
	if n != 5 {
		t.Fatalf("refill is capped at the burst: got %d tokens, want 5", n)
	}
}

func TestLimiterTableFull(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewLimiter(1, 1)
	l.now = func() time.Time { return now }
	for i := range MaxClients {
		l.m[strconv.Itoa(i)] = &bucket{tokens: 1, last: now}
	}
	if l.Allow("new") {
		t.Fatal("a new client admitted to a full table of active clients")
	}
	now = now.Add(IdleAfter + time.Second)
	if !l.Allow("new") {
		t.Fatal("idle clients were not evicted for a new one")
	}
}

func TestClientOf(t *testing.T) {
	if ClientOf("127.0.0.1:5000") != "127.0.0.1" || ClientOf("[::1]:80") != "::1" || ClientOf("weird") != "weird" {
		t.Fatal("ClientOf")
	}
}
