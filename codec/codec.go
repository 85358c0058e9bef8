// Package codec holds one Codec per wire format, registered by name and by
// media type, so that the REST server, the gRPC server and the load client
// agree on what "toon" or "application/msgpack" means.
package codec

import (
	"bytes"
	"fmt"
	"mime"
	"sort"
	"strings"
	"sync"
)

// Codec encodes and decodes the api package's types in one wire format.
// The method set matches grpc-go's encoding.Codec, so a Codec can be
// registered with gRPC as well. Implementations must be safe for concurrent use.
type Codec interface {
	// Name is the registry name: "json", "json-fast", "toon", "protobuf", ...
	Name() string
	Marshal(v any) ([]byte, error)
	Unmarshal(data []byte, v any) error
}

// BufferMarshaler is a Codec that can encode straight into a caller's
// buffer. encoding/json's Marshal encodes into a pooled buffer and returns a
// copy of it; a server that has a pooled reply buffer of its own saves that
// copy and its allocation on every reply (issue 17).
type BufferMarshaler interface {
	// MarshalTo appends the encoding of v to dst: the bytes Marshal returns.
	// On error dst is as it was.
	MarshalTo(dst *bytes.Buffer, v any) error
}

// MarshalTo appends c's encoding of v to dst: through c's MarshalTo when it
// has one, else through Marshal and a copy.
func MarshalTo(c Codec, dst *bytes.Buffer, v any) error {
	if m, ok := c.(BufferMarshaler); ok {
		return m.MarshalTo(dst, v)
	}
	b, err := c.Marshal(v)
	if err != nil {
		return err
	}
	dst.Write(b)
	return nil
}

// Entry is a registered codec with its media types; MediaTypes[0] is the
// canonical one, sent in Content-Type.
type Entry struct {
	Codec      Codec
	MediaTypes []string
}

var (
	mu      sync.RWMutex
	byName  = map[string]Entry{}
	byMedia = map[string]Entry{}
)

// Register adds c under its name and the given media types (canonical
// first). Media types already registered keep their first codec, so that
// "application/json" stays encoding/json unless a server chooses otherwise.
// Register panics on a duplicate name: that is a programming error.
func Register(c Codec, mediaTypes ...string) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := byName[c.Name()]; dup {
		panic("codec: duplicate registration of " + c.Name())
	}
	e := Entry{Codec: c, MediaTypes: mediaTypes}
	byName[c.Name()] = e
	for _, mt := range mediaTypes {
		if _, ok := byMedia[mt]; !ok {
			byMedia[mt] = e
		}
	}
}

// Lookup returns the codec registered under name.
func Lookup(name string) (Entry, bool) {
	mu.RLock()
	defer mu.RUnlock()
	e, ok := byName[name]
	return e, ok
}

// MustLookup is Lookup for names known at compile time.
func MustLookup(name string) Entry {
	e, ok := Lookup(name)
	if !ok {
		panic("codec: no codec named " + name)
	}
	return e
}

// ForMediaType returns the default codec for a media type, ignoring
// parameters such as charset ("application/json; charset=utf-8").
func ForMediaType(mediaType string) (Entry, bool) {
	mt := BaseMediaType(mediaType)
	mu.RLock()
	defer mu.RUnlock()
	e, ok := byMedia[mt]
	return e, ok
}

// Names lists the registered codec names, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Formats lists the format names a user picks from (--format): one per
// distinct canonical media type, preferring the default codec for it.
func Formats() []string {
	mu.RLock()
	defer mu.RUnlock()
	var out []string
	for n, e := range byName {
		if byMedia[e.MediaTypes[0]].Codec.Name() == n {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// BaseMediaType lower-cases a media type and strips its parameters.
// Fast path for the common parameterless case; mime.ParseMediaType otherwise.
func BaseMediaType(s string) string {
	if i := strings.IndexByte(s, ';'); i >= 0 {
		if mt, _, err := mime.ParseMediaType(s); err == nil {
			return mt
		}
		s = s[:i]
	}
	return strings.ToLower(strings.TrimSpace(s))
}

// errType reports a value of a type the codec cannot handle.
func errType(codec string, v any) error {
	return fmt.Errorf("codec %s: unsupported type %T", codec, v)
}
