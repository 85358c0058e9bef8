package scenario

import (
	"context"
	"sync"

	"github.com/wirebench/wirebench/api"
	"github.com/wirebench/wirebench/codec"
	"github.com/wirebench/wirebench/load"
)

// apiClient is one VU's connection to the reference API over one
// transport. Each method performs one request, fills o's status and
// payload bytes, sets o.Fail on a transport error, an unexpected status
// or an undecodable body, and reports success. Checking what the body
// says is the scenario's job. Not safe for concurrent use.
type apiClient interface {
	listUsers(ctx context.Context, out *api.UserList, o *load.Outcome) bool
	// countUsers lists the users and counts them, decoding into a list
	// taken from userLists once the response is in: a VU keeps no list.
	countUsers(ctx context.Context, o *load.Outcome) (int, bool)
	createUser(ctx context.Context, in *encoded[api.User], out *api.User, o *load.Outcome) bool
	getUser(ctx context.Context, id int64, out *api.User, o *load.Outcome) bool
	updateUser(ctx context.Context, id int64, in *encoded[api.User], out *api.User, o *load.Outcome) bool
	deleteUser(ctx context.Context, id int64, o *load.Outcome) bool
	echo(ctx context.Context, in *encoded[api.EchoRequest], out *api.EchoResponse, o *load.Outcome) bool
	close()
}

// encoded is a request value with its body pre-encoded in the run's
// format, so the client spends its CPU on the exchange, not on encoding.
type encoded[T any] struct {
	v    T
	body []byte
}

// userLists are the lists countUsers decodes into, shared by the VUs: one
// is held only while a response is decoded (a list of the reference
// dataset is ~70 KB, which per VU was most of the client's memory at
// thousands of VUs).
var userLists = sync.Pool{New: func() any { return new(api.UserList) }}

// userCount is the out of a list request whose users are only counted.
type userCount struct{ n int }

// unmarshal decodes b into out; a *userCount gets the list's length.
func unmarshal(c codec.Codec, b []byte, out any) error {
	if rb, ok := out.(*rawBody); ok { // checked by the caller
		rb.b = b
		return nil
	}
	uc, ok := out.(*userCount)
	if !ok {
		return c.Unmarshal(b, out)
	}
	l := userLists.Get().(*api.UserList)
	err := c.Unmarshal(b, l)
	uc.n = len(l.Users)
	clear(l.Users) // the strings are garbage now; the slice is reused
	l.Users = l.Users[:0]
	userLists.Put(l)
	return err
}
