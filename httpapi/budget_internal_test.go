package httpapi

import (
	"context"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirebench/wirebench/store"
)

// TestReplyBudget pins the budget's arithmetic: a reply that fits exactly
// is taken, one byte more is shed while others hold some, a reply alone
// always fits, and release gives back exactly what was taken.
func TestReplyBudget(t *testing.T) {
	b := replyBudget{limit: 10}
	if !b.acquire(4) || !b.acquire(6) {
		t.Fatal("4 + 6 bytes within a 10-byte budget were refused")
	}
	if b.acquire(1) {
		t.Fatal("an 11th byte was taken from a full 10-byte budget")
	}
	if got := b.used.Load(); got != 10 {
		t.Fatalf("used %d after a refused acquire, want 10", got)
	}
	b.release(6)
	if got := b.used.Load(); got != 4 {
		t.Fatalf("used %d after releasing 6 of 10, want 4", got)
	}
	b.release(4)
	if !b.acquire(25) {
		t.Fatal("a reply alone was refused: it must always be sent")
	}
	b.release(25)
	if got := b.used.Load(); got != 0 {
		t.Fatalf("used %d after releasing everything, want 0", got)
	}
}

// TestReplyBudgetOption: a configured budget is kept, the zero value is
// the default, and the encoding slots are max(2, GOMAXPROCS).
func TestReplyBudgetOption(t *testing.T) {
	st := store.NewMemory(store.Options{})
	for _, tc := range []struct{ opt, want int64 }{{0, 512 << 20}, {-1, 512 << 20}, {1000, 1000}} {
		s, err := New(st, Options{MaxReplyBytes: tc.opt})
		if err != nil {
			t.Fatal(err)
		}
		if s.replies.limit != tc.want {
			t.Errorf("MaxReplyBytes %d: budget %d, want %d", tc.opt, s.replies.limit, tc.want)
		}
		if s.slots.Cap() < 2 {
			t.Errorf("%d encoding slots, want at least 2", s.slots.Cap())
		}
	}
}

// TestShedBeforeEncoding: while held replies leave less of the budget
// than a route's last reply, a GET of that route is shed (503, Retry-After)
// before its snapshot and encoding — so without an encoding slot: here
// every slot is held, and the shed GET still answers. Clients that never
// read a 12 MB list made the server encode each further one only to throw
// it away, holding the slots every other request waits for. A route whose
// replies fit is served as before, and once the held reply goes the list
// is served again.
func TestShedBeforeEncoding(t *testing.T) {
	st := store.NewMemory(store.Options{})
	if err := st.Seed(200, 0); err != nil {
		t.Fatal(err)
	}
	s, err := New(st, Options{MaxReplyBytes: 30 << 10}) // a list of 200 users is ~20 KiB: one fits
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) Response {
		var resp Response
		s.Handle(&Request{Method: "GET", Path: path, ContentLength: -1}, &resp)
		return resp
	}
	held := get("/users") // not released: a client that does not read
	if held.Status != 200 || len(held.Body) < 15<<10 {
		t.Fatalf("first list: %d, %d bytes", held.Status, len(held.Body))
	}
	for range s.slots.Cap() {
		s.slots.Acquire()
	}
	done := make(chan Response)
	go func() { done <- get("/users") }()
	select {
	case r := <-done:
		if r.Status != 503 || r.RetryAfter == "" {
			t.Errorf("a list past the budget: %d, Retry-After %q; want 503 with one", r.Status, r.RetryAfter)
		}
		r.Release()
	case <-time.After(time.Minute):
		t.Fatal("a list past the budget waited for an encoding slot: it was to be shed before encoding")
	}
	for range s.slots.Cap() {
		s.slots.Release()
	}
	if r := get("/users/1"); r.Status != 200 {
		t.Errorf("a small reply that fits: %d", r.Status)
	} else {
		r.Release()
	}
	held.Release()
	if r := get("/users"); r.Status != 200 || r.RetryAfter != "" {
		t.Errorf("the list once the budget is back: %d, Retry-After %q", r.Status, r.RetryAfter)
	} else {
		r.Release()
	}
	if got := s.replies.used.Load(); got != 0 {
		t.Errorf("budget used %d after every reply was released", got)
	}
	if b, a := s.replies.shedBefore.Load(), s.replies.shedAfter.Load(); b != 1 || a != 0 {
		t.Errorf("shed %d before encoding and %d after, want 1 and 0", b, a)
	}
}

// TestSmallRepliesTakeNoSlot: a GET of a route whose replies are small
// (one user) is served while every encoding slot is held — by list
// encodings, say. Behind the slots it waited for every list queued before
// it: 1,000 never-read GETs of a 12 MB list over HTTP/3 held other
// clients' GETs of one user for the whole attack and minutes after it.
// A list still waits for a slot.
func TestSmallRepliesTakeNoSlot(t *testing.T) {
	s := seededServer(t, Options{})
	get := func(path string) int { // the status
		var resp Response
		s.Handle(&Request{Method: "GET", Path: path, ContentLength: -1}, &resp)
		defer resp.Release()
		return resp.Status
	}
	get("/users/1") // the routes' reply sizes are known from their first
	get("/users")   // (a list of unknown size takes a big slot)
	for range s.slots.Cap() {
		s.slots.Acquire()
	}
	one, list := make(chan int), make(chan int)
	go func() { one <- get("/users/2") }()
	go func() { list <- get("/users") }()
	select {
	case status := <-one:
		if status != 200 {
			t.Errorf("GET /users/2 with every slot held: %d", status)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("GET /users/2 waited for an encoding slot held by others")
	}
	for s.slots.Waiting() != 1 {
		time.Sleep(time.Millisecond) // the list waits for one
	}
	for range s.slots.Cap() {
		s.slots.Release()
	}
	if status := <-list; status != 200 {
		t.Errorf("the list once a slot is free: %d", status)
	}
}

// TestGoneClientSkipsEncoding: a GET whose client went while it waited
// for an encoding slot is answered without its snapshot and encoding
// (503, counted as client_gone) when its turn comes: never-read GETs of a
// 12 MB list, their connections closed, went on encoding the list for
// nobody one slot at a time for minutes, every later request behind them.
// A client still there is served.
func TestGoneClientSkipsEncoding(t *testing.T) {
	s := seededServer(t, Options{})
	var first Response // the list's size known (unknown, it takes a big slot)
	s.Handle(&Request{Method: "GET", Path: "/users", ContentLength: -1}, &first)
	first.Release()
	for range s.slots.Cap() {
		s.slots.Acquire()
	}
	gone, cancel := context.WithCancel(context.Background())
	results := make(chan result, 2)
	for _, ctx := range []context.Context{gone, context.Background()} {
		go func() {
			var resp Response
			s.Handle(&Request{Method: "GET", Path: "/users", ContentLength: -1, Context: ctx}, &resp)
			defer resp.Release()
			results <- result{resp.Status, len(resp.Body)}
		}()
	}
	for s.slots.Waiting() != 2 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	for range s.slots.Cap() {
		s.slots.Release()
	}
	var statuses []int
	for range 2 {
		r := <-results
		statuses = append(statuses, r.status)
		if r.status == 200 && r.size < 15<<10 {
			t.Errorf("the list: %d bytes", r.size)
		}
	}
	slices.Sort(statuses)
	if !slices.Equal(statuses, []int{200, 503}) || s.replies.shedGone.Load() != 1 {
		t.Errorf("statuses %v, %d shed as gone; want the gone client's 503 (counted) and the other's 200", statuses, s.replies.shedGone.Load())
	}
}

// TestConnectionShare: a connection's large replies being written hold at
// most its share of the budget (or one reply); its next large reply waits
// for an earlier one to be released — before its slot and its encoding —,
// while another connection's list and the same connection's small replies
// are served at once. 10 HTTP/3 connections x 100 never-read GETs of a
// 12 MB list had the server encode some 45 lists in the attack's first
// seconds (the budget's worth), every other client's request waiting for
// the CPU behind them. A waiter whose client goes is shed as gone.
func TestConnectionShare(t *testing.T) {
	s, get := shareServer(t, 32*30<<10) // a share of 30 KiB: one ~20 KiB list
	conn := WithConnection(context.Background(), nil)
	held, r := get(conn, "/users", false) // not released: a client that does not read
	if r.status != 200 || r.size < 15<<10 {
		t.Fatalf("first list: %+v", r)
	}
	second := make(chan result, 1)
	go func() { _, r := get(conn, "/users", true); second <- r }()
	waitWaiting := func(n int64) { t.Helper(); waitCount(t, &s.replies.connWaiting, n, "their connection's share") }
	waitWaiting(1)
	if _, r := get(WithConnection(context.Background(), nil), "/users", true); r.status != 200 {
		t.Errorf("another connection's list: %+v", r)
	}
	if _, r := get(conn, "/users/2", true); r.status != 200 {
		t.Errorf("the connection's small reply: %+v", r)
	}
	select {
	case r := <-second:
		t.Fatalf("the connection's second list was served while its first was held: %+v", r)
	case <-time.After(20 * time.Millisecond):
	}
	if u := s.replies.used.Load(); u != int64(r.size) {
		t.Errorf("budget used %d while one list of %d bytes is held", u, r.size)
	}
	// A waiter whose client goes is shed as gone, without its encoding.
	gone, cancel := context.WithCancel(conn)
	third := make(chan result, 1)
	go func() { _, r := get(gone, "/users", true); third <- r }()
	waitWaiting(2)
	cancel()
	if r := <-third; r.status != 503 || s.replies.shedGone.Load() != 1 {
		t.Errorf("a waiter whose client went: %+v, %d shed as gone; want 503, 1", r, s.replies.shedGone.Load())
	}
	held.Release()
	if r := <-second; r.status != 200 || r.size < 15<<10 {
		t.Errorf("the second list once the first is released: %+v", r)
	}
	if u, w, c := s.replies.used.Load(), s.replies.connWaiting.Load(), s.replies.connWaited.Load(); u != 0 || w != 0 || c != 2 {
		t.Errorf("budget used %d, %d waiting, %d waited after every reply was released; want 0, 0, 2", u, w, c)
	}
	if c := connOf(conn); c.held != 0 {
		t.Errorf("the connection's share holds %d bytes after every reply was released", c.held)
	}
}

// TestSourceShare: a source's (client address's) large replies that are
// not being read hold at most its share of the budget (or one reply), over
// all its connections: its next large reply, on any connection, waits —
// before its slot and its encoding — for an unread one to be read or
// released, while another source's list and the source's small replies
// are served at once. A reply being read (its chunks written) does not
// count: a source reading its replies never waits. 60 HTTP/3 connections
// × one never-read GET of a 12 MB list escaped the connection's share and
// had the server encode and hold the budget's ~43 lists (RSS 720 MiB over
// a 512 MiB budget). A waiter whose client goes is shed as gone.
func TestSourceShare(t *testing.T) {
	s, get := shareServer(t, 8*30<<10) // a source's share of 30 KiB: one ~20 KiB list
	src := NewSource()
	held, r := get(WithConnection(context.Background(), src), "/users", false)
	if r.status != 200 || r.size < 15<<10 || held.src == nil {
		t.Fatalf("first list: %+v (counted by its source: %v)", r, held.src != nil)
	}
	// Being read, it does not count: the source's next list on another
	// connection is served at once, however long the first has been held.
	time.Sleep(unreadAfter + 50*time.Millisecond)
	held.src.wrote()
	if _, r := get(WithConnection(context.Background(), src), "/users", true); r.status != 200 || s.replies.srcWaited.Load() != 0 {
		t.Fatalf("a list while the source's first is being read: %+v, %d waited", r, s.replies.srcWaited.Load())
	}
	// Unread past unreadAfter, it does: the next list waits.
	time.Sleep(unreadAfter + 50*time.Millisecond)
	second := make(chan result, 1)
	go func() { _, r := get(WithConnection(context.Background(), src), "/users", true); second <- r }()
	waitWaiting := func(n int64) { t.Helper(); waitCount(t, &s.replies.srcWaiting, n, "their source's share") }
	waitWaiting(1)
	if _, r := get(WithConnection(context.Background(), NewSource()), "/users", true); r.status != 200 {
		t.Errorf("another source's list: %+v", r)
	}
	if _, r := get(WithConnection(context.Background(), src), "/users/2", true); r.status != 200 {
		t.Errorf("the source's small reply: %+v", r)
	}
	select {
	case r := <-second:
		t.Fatalf("the source's second list was served while its first was held unread: %+v", r)
	case <-time.After(20 * time.Millisecond):
	}
	// The first read again: the waiter goes on.
	held.src.wrote()
	if r := <-second; r.status != 200 || r.size < 15<<10 {
		t.Errorf("the second list once the first is read again: %+v", r)
	}
	// A waiter whose client goes is shed as gone, without its encoding.
	time.Sleep(unreadAfter + 50*time.Millisecond)
	gone, cancel := context.WithCancel(WithConnection(context.Background(), src))
	third := make(chan result, 1)
	go func() { _, r := get(gone, "/users", true); third <- r }()
	waitWaiting(1)
	cancel()
	if r := <-third; r.status != 503 || s.replies.shedGone.Load() != 1 {
		t.Errorf("a waiter whose client went: %+v, %d shed as gone; want 503, 1", r, s.replies.shedGone.Load())
	}
	// Released, the unread reply lets the next one go.
	fourth := make(chan result, 1)
	go func() { _, r := get(WithConnection(context.Background(), src), "/users", true); fourth <- r }()
	waitWaiting(1)
	held.Release()
	if r := <-fourth; r.status != 200 {
		t.Errorf("a list once the unread one is released: %+v", r)
	}
	if u, w, c := s.replies.used.Load(), s.replies.srcWaiting.Load(), s.replies.srcWaited.Load(); u != 0 || w != 0 || c != 3 {
		t.Errorf("budget used %d, %d waiting, %d waited after every reply was released; want 0, 0, 3", u, w, c)
	}
	if len(src.replies) != 0 || src.total != 0 {
		t.Errorf("the source's share holds %d replies, %d bytes after every reply was released", len(src.replies), src.total)
	}
}

// TestBigRepliesLeaveACPU: replies of bigReply or more are encoded in the
// big slots, one fewer than GOMAXPROCS (at least one), so such encodings
// never hold every P: with two at once on a 2-CPU server, never-read GETs
// of a 12 MB list took another client's p99 from ~2 ms to 14-36 ms. A
// big list waits while every big slot is held; a smaller list is served.
func TestBigRepliesLeaveACPU(t *testing.T) {
	st := store.NewMemory(store.Options{})
	if err := st.Seed(5_000, 200); err != nil { // users ~600 KiB, todos ~14 KiB
		t.Fatal(err)
	}
	s, err := New(st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.routes["/users"].big() {
		t.Error("a list of unknown size does not count as big: the first GETs of a list arrive together")
	}
	if want := max(1, runtime.GOMAXPROCS(0)-1); s.bigSlots.Cap() != want {
		t.Errorf("%d big slots at GOMAXPROCS %d, want %d", s.bigSlots.Cap(), runtime.GOMAXPROCS(0), want)
	}
	get := func(path string) result {
		var resp Response
		// A connection with its share (an HTTP/3 one) each time.
		s.Handle(&Request{Method: "GET", Path: path, ContentLength: -1, Context: WithConnection(context.Background(), nil)}, &resp)
		defer resp.Release()
		return result{resp.Status, len(resp.Body)}
	}
	if r := get("/users"); r.status != 200 || r.size < bigReply {
		t.Fatalf("the user list: %+v, want 200 and at least %d bytes", r, bigReply)
	}
	if r := get("/todos"); r.status != 200 || r.size < slotFreeReply || r.size >= bigReply {
		t.Fatalf("the todo list: %+v, want 200 and %d..%d bytes", r, slotFreeReply, bigReply)
	}
	for range s.bigSlots.Cap() {
		s.bigSlots.Acquire()
	}
	list := make(chan result, 1)
	go func() { list <- get("/users") }()
	for deadline := time.Now().Add(10 * time.Second); s.bigSlots.Waiting() != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the big list did not wait for a big slot while every one was held")
		}
	}
	if r := get("/todos"); r.status != 200 {
		t.Errorf("the todo list while every big slot is held: %+v", r)
	}
	// Over HTTP/1.1 and h2 (a net/http connection's share) the big list
	// takes an ordinary slot: it is served while every big slot is held.
	h1 := make(chan int, 1)
	go func() {
		var resp Response
		s.Handle(&Request{Method: "GET", Path: "/users", ContentLength: -1, Context: WithTCPConnection(context.Background(), NewSource())}, &resp)
		h1 <- resp.Status
		resp.Release()
	}()
	select {
	case st := <-h1:
		if st != 200 {
			t.Errorf("the user list over net/http while every big slot is held: %d", st)
		}
	case <-time.After(time.Minute): // a guard: it waits for a big slot
		t.Fatal("the user list over net/http waited for a big slot")
	}
	for range s.bigSlots.Cap() {
		s.bigSlots.Release()
	}
	if r := <-list; r.status != 200 {
		t.Errorf("the big list once a big slot is free: %+v", r)
	}
}

type result struct{ status, size int }

// shareServer is a server of 200 users (their list ~20 KiB) with a reply
// budget of maxReply bytes, and a GET through it on ctx whose reply is
// released or, for a client that does not read, held; a user's GET has
// taught it that route's replies are small.
func shareServer(t *testing.T, maxReply int64) (*Server, func(ctx context.Context, path string, release bool) (Response, result)) {
	t.Helper()
	s := seededServer(t, Options{MaxReplyBytes: maxReply})
	get := func(ctx context.Context, path string, release bool) (Response, result) {
		var resp Response
		s.Handle(&Request{Method: "GET", Path: path, ContentLength: -1, Context: ctx}, &resp)
		r := result{resp.Status, len(resp.Body)}
		if release {
			resp.Release()
		}
		return resp, r
	}
	get(context.Background(), "/users/1", true) // its replies are known small
	return s, get
}

// waitCount waits (a guard: 10 s) until c counts n requests
// waiting for what.
func waitCount(t *testing.T, c *atomic.Int64, n int64, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); c.Load() != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests waiting for %s, want %d", c.Load(), what, n)
		}
	}
}

// seededServer is a server of 200 users (their list ~20 KiB) with opts.
func seededServer(t *testing.T, opts Options) *Server {
	t.Helper()
	st := store.NewMemory(store.Options{})
	if err := st.Seed(200, 0); err != nil {
		t.Fatal(err)
	}
	s, err := New(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestTrickleReaderCountsUnread: a client that takes a chunk of a large
// reply now and then counts as not reading it. It escaped the source's
// share when the rule was only "a chunk within unreadAfter of the last":
// each chunk, taken after a long pause, made the reply count as read for
// unreadAfter, and the source's waiting lists went on to their encoding.
// Now the k-th chunk is due within k unreadAfters of the encoding.
func TestTrickleReaderCountsUnread(t *testing.T) {
	const n, share = 10 << 20, 16 << 20 // a second reply fits only if the first is read
	s := NewSource()
	r := s.add(n)
	if !s.fits(n, share) {
		t.Fatal("a reply just encoded counts as unread")
	}
	time.Sleep(2*unreadAfter + 100*time.Millisecond)
	if s.fits(n, share) {
		t.Fatal("a reply none of whose chunks was taken for twice unreadAfter counts as read")
	}
	r.wrote() // one chunk, long after it was due
	if u := s.unread(clock()); u != n {
		t.Errorf("a reply whose first chunk came %v after its encoding: %d bytes unread, want %d", 2*unreadAfter+100*time.Millisecond, u, n)
	}
	if s.fits(n, share) {
		t.Error("a second reply fits while the first trickles")
	}
	// Dropped with most of its chunks untaken, it still counts
	// (TestDroppedReplyCounts).
	if !s.remove(r) || s.fits(n, share) {
		t.Error("a second reply fits once the trickled one was dropped")
	}
}

// TestDroppedReplyCounts: a reply its client drops before taking all its
// chunks (a reset stream, a closed connection) leaves its untaken bytes
// counted by its source until a reader taking one chunk per unreadAfter
// since the encoding would have finished it, and the source's waiters
// are woken when that ends; a reply written whole is forgotten at once.
// Released at once, a reset reply cost its source nothing: a client
// resetting each stream once its headers were in had a 12 MB list
// encoded per request, back to back.
func TestDroppedReplyCounts(t *testing.T) {
	const n, share = 10 << 20, 16 << 20 // a second reply fits only if the first is not counted
	s := NewSource()
	unread := func(s *Source) int64 { s.mu.Lock(); defer s.mu.Unlock(); return s.unread(clock()) }
	r := s.add(n)
	for range (n + replyChunk - 1) / replyChunk {
		r.wrote()
	}
	if s.remove(r) || unread(s) != 0 {
		t.Fatalf("a reply written whole: counted dropped, %d bytes unread", unread(s))
	}
	r = s.add(n)
	r.wrote()
	r.wrote()
	if !s.remove(r) {
		t.Fatal("a reply dropped after two of its chunks: not counted dropped")
	}
	if u := unread(s); u != n-2*replyChunk {
		t.Errorf("a reply dropped after two of its chunks: %d bytes unread, want %d", u, n-2*replyChunk)
	}
	if s.fits(n, share) {
		t.Error("a second reply fits while the dropped one counts")
	}
	// A dropped reply of four chunks counts for four unreadAfters (1 s);
	// a waiter for the whole share is woken when it ends.
	s = NewSource()
	if !s.remove(s.add(4 * replyChunk)) {
		t.Fatal("a reply dropped with none of its chunks taken: not counted dropped")
	}
	var last, waiting atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a guard
	defer cancel()
	if waited, err := s.wait(ctx, &last, share, &waiting); !waited || err != nil {
		t.Fatalf("a wait for the whole share while a dropped reply counts: waited %v, %v", waited, err)
	}
	if u := unread(s); u != 0 || len(s.dropped) != 0 || s.droppedTotal != 0 {
		t.Errorf("once the dropped reply's time is over: %d bytes unread, %d dropped replies kept (%d bytes)", u, len(s.dropped), s.droppedTotal)
	}
}
