package scenario

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/wirebench/wirebench/load"
	"github.com/wirebench/wirebench/measure"
	"github.com/wirebench/wirebench/payload"
	"github.com/wirebench/wirebench/results"
)

// rawBody is the out of a request whose body the caller checks itself:
// it is valid until the client's next request.
type rawBody struct{ b []byte }

// recordsVU runs CRUD over the user's records, one request per Do: list
// (every record unchanged, at most one being created per VU besides),
// create a copy of a record under a key of this VU's, get a record of the
// file (each in turn), replace the created one with another record's
// content, delete it. Every reply is decoded in the run's format and
// compared with the records as read (payload.Dataset).
type recordsVU struct {
	apiVU
	c      *restClient
	d      *payload.Dataset
	format string // the client's codec name
	step   int
	next   int // the record the next get reads
	key    string
	path   []byte
	// newRec and changed are the created record and its replacement,
	// with their bodies in the run's format; want are the file's records.
	newRec, changed *payload.Expected
	newBody, chBody []byte
	want            []*payload.Expected
	pending         bool // created and not yet deleted
	out             rawBody
	g               *recordsGRPC // over gRPC (c is nil), else nil
}

// recordsGRPC is a records VU's side over gRPC: the server's
// wirebench.records.Records (built from the schema, as the server builds
// it) and the request messages, made once.
type recordsGRPC struct {
	c                              grpcClient
	list, get, create, update, del string // full method names
	listOut, recOut                protoreflect.MessageDescriptor
	newMsg, chMsg, ownKey          proto.Message
	keys                           []proto.Message // the file's records' keys, by index
}

func newRecordsGRPC(c grpcClient, d *payload.Dataset, own string, newBody, chBody []byte) (*recordsGRPC, error) {
	svc := d.Service()
	ms := svc.Methods()
	name := func(m string) string { return "/" + string(svc.FullName()) + "/" + m }
	g := &recordsGRPC{c: c, list: name("List"), get: name("Get"), create: name("Create"), update: name("Update"), del: name("Delete"),
		listOut: ms.ByName("List").Output(), recOut: ms.ByName("Get").Output()}
	keyMD := ms.ByName("Get").Input()
	key := func(k string) proto.Message {
		m := dynamicpb.NewMessage(keyMD)
		m.Set(keyMD.Fields().ByName("key"), protoreflect.ValueOfString(k))
		return m
	}
	for i := range d.Len() {
		k, _ := d.Record(i)
		g.keys = append(g.keys, key(k))
	}
	g.ownKey = key(own)
	for _, x := range []struct {
		m    *proto.Message
		body []byte
	}{{&g.newMsg, newBody}, {&g.chMsg, chBody}} {
		m := dynamicpb.NewMessage(g.recOut)
		if err := proto.Unmarshal(x.body, m); err != nil {
			return nil, fmt.Errorf("%w: records: %v", load.ErrOptions, err)
		}
		*x.m = m
	}
	return g, nil
}

// doGRPC is Do over gRPC: the same iteration and checks.
func (v *recordsVU) doGRPC(ctx context.Context, o *load.Outcome) {
	g := v.g
	o.Op = v.step
	switch v.step {
	case opList:
		if m, ok := grpcCall(ctx, g.c, g.list, &emptypb.Empty{}, dynamicpb.NewMessage(g.listOut), o); ok {
			v.fail(o, "list", v.d.CheckListMessage(m, v.s.copiesAtMost()))
		}
	case opCreate:
		m, ok := grpcCall(ctx, g.c, g.create, g.newMsg, dynamicpb.NewMessage(g.recOut), o)
		if !ok {
			v.step = 0
			return
		}
		v.pending = true
		v.fail(o, "created record", v.d.CheckMessage(m, v.newRec))
	case opGet:
		want, key := v.want[v.next], g.keys[v.next]
		v.next = (v.next + 1) % v.d.Len()
		if m, ok := grpcCall(ctx, g.c, g.get, key, dynamicpb.NewMessage(g.recOut), o); ok {
			v.fail(o, "record", v.d.CheckMessage(m, want))
		}
	case opUpdate:
		if m, ok := grpcCall(ctx, g.c, g.update, g.chMsg, dynamicpb.NewMessage(g.recOut), o); ok {
			v.fail(o, "updated record", v.d.CheckMessage(m, v.changed))
		}
	case opDelete:
		if _, ok := grpcCall(ctx, g.c, g.del, g.ownKey, new(emptypb.Empty), o); ok {
			v.pending = false
		}
		v.step = 0
		return
	}
	v.step++
}

func (s *apiScenario) newRecordsVU(base apiVU) (load.VU, error) {
	d := s.o.Records
	v := &recordsVU{apiVU: base, d: d, next: base.id % d.Len()}
	gc, overGRPC := base.c.(grpcClient)
	if overGRPC {
		v.format = "protobuf"
	} else if rc, ok := base.c.(*restClient); ok {
		v.c, v.format = rc, s.entry.Codec.Name()
	} else {
		return nil, fmt.Errorf("%w: scenario records runs over REST or gRPC", load.ErrOptions)
	}
	_, a := d.Record(base.id % d.Len())
	_, b := d.Record((base.id + 1) % d.Len())
	key, newRec := d.WithKey(a, s.copyNumber(base.id))
	_, changed := d.WithKey(b, s.copyNumber(base.id))
	v.key = key
	v.path = []byte("/records/" + url.PathEscape(v.key))
	var err error
	if v.newBody, err = d.Encode(v.format, newRec); err != nil {
		return nil, fmt.Errorf("%w: records: the record to create in %s: %v", load.ErrOptions, v.format, err)
	}
	if v.chBody, err = d.Encode(v.format, changed); err != nil {
		return nil, fmt.Errorf("%w: records: the record to update in %s: %v", load.ErrOptions, v.format, err)
	}
	if v.newRec, err = d.Expect(v.format, newRec); err != nil {
		return nil, err
	}
	if v.changed, err = d.Expect(v.format, changed); err != nil {
		return nil, err
	}
	if v.want, err = s.expected(d, v.format); err != nil {
		return nil, err
	}
	if overGRPC {
		if v.g, err = newRecordsGRPC(gc, d, key, v.newBody, v.chBody); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func (v *recordsVU) Do(ctx context.Context, o *load.Outcome) {
	if v.g != nil {
		v.doGRPC(ctx, o)
		return
	}
	o.Op = v.step
	switch v.step {
	case opList:
		if v.c.do(ctx, "GET", []byte("/records"), nil, http.StatusOK, &v.out, o) {
			v.fail(o, "list", v.d.CheckList(v.format, v.out.b, v.s.copiesAtMost()))
		}
	case opCreate:
		if !v.c.do(ctx, "POST", []byte("/records"), v.newBody, http.StatusCreated, &v.out, o) {
			v.step = 0
			return
		}
		v.pending = true
		v.fail(o, "created record", v.d.CheckExpected(v.out.b, v.newRec))
	case opGet:
		key, _ := v.d.Record(v.next)
		want := v.want[v.next]
		v.next = (v.next + 1) % v.d.Len()
		if v.c.do(ctx, "GET", []byte("/records/"+url.PathEscape(key)), nil, http.StatusOK, &v.out, o) {
			v.fail(o, "record", v.d.CheckExpected(v.out.b, want))
		}
	case opUpdate:
		if v.c.do(ctx, "PUT", v.path, v.chBody, http.StatusOK, &v.out, o) {
			v.fail(o, "updated record", v.d.CheckExpected(v.out.b, v.changed))
		}
	case opDelete:
		if v.c.do(ctx, "DELETE", v.path, nil, http.StatusNoContent, nil, o) {
			v.pending = false
		}
		v.step = 0
		return
	}
	v.step++
}

// expected prepares the file's records once for every VU.
func (s *apiScenario) expected(d *payload.Dataset, format string) ([]*payload.Expected, error) {
	s.recOnce.Do(func() {
		for i := range d.Len() {
			_, v := d.Record(i)
			e, err := d.Expect(format, v)
			if err != nil {
				s.recErr = err
				return
			}
			s.recWant = append(s.recWant, e)
		}
	})
	return s.recWant, s.recErr
}

// fail marks a reply that differs from the records, naming the first
// difference (cut: failures are counted by their message).
func (v *recordsVU) fail(o *load.Outcome, what string, err error) {
	if err != nil && o.Fail == "" {
		msg := err.Error()
		if len(msg) > 120 {
			msg = strings.ToValidUTF8(msg[:120], "") + "…"
		}
		o.Fail = "check: " + what + " differs from the data: " + msg
	}
}

// Close deletes a record left by an unfinished iteration (not recorded).
func (v *recordsVU) Close() error {
	if v.pending {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var o load.Outcome
		if v.g != nil {
			grpcCall(ctx, v.g.c, v.g.del, v.g.ownKey, new(emptypb.Empty), &o)
		} else {
			v.c.do(ctx, "DELETE", v.path, nil, http.StatusNoContent, nil, &o)
		}
	}
	return v.apiVU.Close()
}

// countRecords checks, once every VU closed, that the server holds
// exactly the file's records: every copy a VU created was deleted again,
// so the next trial starts from the same dataset (fairness rule 1). It
// asks on a connection of its own (bytes not counted, latency not
// recorded); a wrong count, or no answer, is one failed list request,
// with its reason.
func (s *apiScenario) countRecords(res *results.Load) {
	ctx, cancel := context.WithTimeout(context.Background(), s.o.Timeout)
	defer cancel()
	var o load.Outcome
	err := s.checkCount(ctx, &o)
	reason := o.Fail
	if err != nil {
		reason = err.Error()
	}
	if reason == "" {
		return
	}
	res.Requests++
	res.Failed++
	if res.Failures == nil {
		res.Failures = map[string]int64{}
	}
	if !strings.HasPrefix(reason, "check: ") {
		reason = "records after the run: " + reason // the request failed
	}
	res.Failures[reason]++
	if opList < len(res.Ops) {
		res.Ops[opList].Requests++
		res.Ops[opList].Failed++
	}
}

// checkCount sets o.Fail unless the server holds the file's records; an
// error is the check that could not be made (no connection to ask on).
func (s *apiScenario) checkCount(ctx context.Context, o *load.Outcome) error {
	d := s.o.Records
	aside, err := s.c.Aside()
	if err != nil {
		return err
	}
	defer aside.Close()
	format := "protobuf"
	var out rawBody
	switch {
	case aside.GRPC != nil:
		gc := grpcClient{GRPCClient: aside.GRPC.Client(0, s.o.Timeout)}
		defer gc.close()
		list := d.Service().Methods().ByName("List")
		m, ok := grpcCall(ctx, gc, "/"+string(list.Parent().FullName())+"/List", &emptypb.Empty{}, dynamicpb.NewMessage(list.Output()), o)
		if !ok {
			return nil // o.Fail says why
		}
		if out.b, err = proto.Marshal(m); err != nil {
			return err
		}
	default:
		var c *restClient
		if aside.H3 != nil {
			c = s.restClient(nil, aside.H3.Client(0))
		} else {
			c = s.restClient(s.h1Conn(new(measure.Bytes), false), nil)
		}
		defer c.close()
		if !c.do(ctx, "GET", []byte("/records"), nil, http.StatusOK, &out, o) {
			return nil // o.Fail says why
		}
		format = s.entry.Codec.Name()
	}
	if s.o.Segment.N > 1 {
		err = s.checkSegmentKeys(d, format, out.b)
	} else {
		var n int
		n, err = d.ListLen(format, out.b)
		if err == nil && n != d.Len() {
			err = fmt.Errorf("the server holds %d, the file %d", n, d.Len())
		}
	}
	if err != nil {
		o.Fail = "check: records after the run: " + err.Error()
	}
	return nil
}

// copyNumber is the number VU id's copies are keyed by (Dataset.WithKey):
// 1, 2, … in a whole run; in segment i of n, i, i+n, i+2n, …, so that the
// segments of one test, against one server, never share a key.
func (s *apiScenario) copyNumber(id int) int {
	if seg := s.o.Segment; seg.N > 1 {
		return id*seg.N + seg.I
	}
	return id + 1
}

// copiesAtMost is how many records beyond the file a list may hold: one
// being created per VU of this run and, in a segment, per VU of the
// other segments of the test.
func (s *apiScenario) copiesAtMost() int {
	n := int(s.vus.Load())
	if seg := s.o.Segment; seg.N > 1 {
		n += s.o.WholeVUs - int(seg.Share(int64(s.o.WholeVUs)))
	}
	return n
}

// checkSegmentKeys is the count check of one segment of a test: the other
// segments may still be running, holding their copies, so it checks what
// this segment owns: every record of the file is there, no copy of this
// segment's VUs is left, and the others' copies are within their VUs.
func (s *apiScenario) checkSegmentKeys(d *payload.Dataset, format string, body []byte) error {
	keys, err := d.ListKeys(format, body)
	if err != nil {
		return err
	}
	file := make(map[string]bool, d.Len())
	for i := range d.Len() {
		k, _ := d.Record(i)
		file[k] = true
	}
	own := map[string]bool{}
	_, v := d.Record(0)
	for id := range int(s.vus.Load()) {
		k, _ := d.WithKey(v, s.copyNumber(id))
		own[k] = true
	}
	found, others := 0, 0
	for _, k := range keys {
		switch {
		case file[k]:
			found++
		case own[k]:
			return fmt.Errorf("the copy %s this segment created is still there", k)
		default:
			others++
		}
	}
	if found != d.Len() {
		return fmt.Errorf("the server holds %d of the file's %d records", found, d.Len())
	}
	if most := s.copiesAtMost() - int(s.vus.Load()); others > most {
		return fmt.Errorf("the server holds %d records beyond the file, more than the other segments' %d VUs create", others, most)
	}
	return nil
}
