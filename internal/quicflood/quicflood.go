// Package quicflood makes the packets of a QUIC handshake flood: a
// client's Initial packets carrying a ClientHello, protected for a new
// connection each time (RFC 9001 §5: keys from the Destination Connection
// ID, an HKDF and an AES-GCM seal, nothing asymmetric). A server that
// admits one does a whole key exchange and certificate signature and then
// waits for a client that never answers. Used by bench/h3flood and the
// server's abuse tests; it spoofs nothing.
package quicflood

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"net"
)

// Connection sends, on pc to raddr, the Initial packets of one new
// connection (a fresh random Destination Connection ID) carrying hello,
// and returns how many packets it sent. buf is scratch space, returned for
// reuse.
func Connection(pc *net.UDPConn, raddr *net.UDPAddr, hello, scid, buf []byte) (int, []byte, error) {
	dcid := make([]byte, 8)
	rand.Read(dcid)
	return ConnectionTo(pc, raddr, dcid, hello, scid, buf)
}

// ConnectionTo is Connection with the new connection's Destination
// Connection ID given (at least 8 bytes, RFC 9000 §7.2), so its replies
// can be told apart (RefusalOf).
func ConnectionTo(pc *net.UDPConn, raddr *net.UDPAddr, dcid, hello, scid, buf []byte) (int, []byte, error) {
	keys := ClientInitialKeys(dcid)
	sent := 0
	for pn, off := 0, 0; off < len(hello); pn++ {
		var n int
		buf, n = InitialPacket(buf[:0], keys, dcid, scid, uint32(pn), hello, off)
		off += n
		if _, err := pc.WriteToUDP(buf, raddr); err != nil {
			return sent, buf, err
		}
		sent++
	}
	return sent, buf, nil
}

// ClientHello runs crypto/tls's QUIC client to its first flight and
// returns the ClientHello it would send in Initial packets, with the
// transport parameters a QUIC server requires of a client (its Initial
// Source Connection ID) and the limits quic-go's client sends.
func ClientHello(scid []byte) ([]byte, error) {
	tp := varintParam(nil, 0x0f, scid)                  // initial_source_connection_id
	tp = varintParam(tp, 0x04, quicVarint(nil, 1<<20))  // initial_max_data
	tp = varintParam(tp, 0x05, quicVarint(nil, 1<<19))  // initial_max_stream_data_bidi_local
	tp = varintParam(tp, 0x06, quicVarint(nil, 1<<19))  // initial_max_stream_data_bidi_remote
	tp = varintParam(tp, 0x07, quicVarint(nil, 1<<19))  // initial_max_stream_data_uni
	tp = varintParam(tp, 0x08, quicVarint(nil, 100))    // initial_max_streams_bidi
	tp = varintParam(tp, 0x09, quicVarint(nil, 100))    // initial_max_streams_uni
	tp = varintParam(tp, 0x01, quicVarint(nil, 30_000)) // max_idle_timeout, ms
	q := tls.QUICClient(&tls.QUICConfig{TLSConfig: &tls.Config{
		InsecureSkipVerify: true, ServerName: "localhost", NextProtos: []string{"h3"}, MinVersion: tls.VersionTLS13,
	}})
	q.SetTransportParameters(tp)
	if err := q.Start(context.Background()); err != nil {
		return nil, err
	}
	defer q.Close()
	var hello []byte
	for {
		ev := q.NextEvent()
		switch ev.Kind {
		case tls.QUICNoEvent:
			if len(hello) == 0 {
				return nil, errors.New("crypto/tls made no ClientHello")
			}
			return hello, nil
		case tls.QUICWriteData:
			if ev.Level == tls.QUICEncryptionLevelInitial {
				hello = append(hello, ev.Data...)
			}
		}
	}
}

func quicVarint(b []byte, v uint64) []byte {
	switch {
	case v < 1<<6:
		return append(b, byte(v))
	case v < 1<<14:
		return binary.BigEndian.AppendUint16(b, uint16(v)|0x4000)
	case v < 1<<30:
		return binary.BigEndian.AppendUint32(b, uint32(v)|0x8000_0000)
	default:
		return binary.BigEndian.AppendUint64(b, v|0xc000_0000_0000_0000)
	}
}

func varintParam(b []byte, id uint64, val []byte) []byte {
	b = quicVarint(b, id)
	b = quicVarint(b, uint64(len(val)))
	return append(b, val...)
}

// InitialKeys are a client's Initial packet protection keys (RFC 9001 §5).
type InitialKeys struct {
	aead cipher.AEAD
	iv   []byte
	hp   cipher.Block
}

// quicV1Salt is RFC 9001 §5.2's initial_salt for QUIC version 1.
var quicV1Salt = []byte{0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17, 0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a}

func ClientInitialKeys(dcid []byte) InitialKeys {
	initial, _ := hkdf.Extract(sha256.New, dcid, quicV1Salt)
	secret := expandLabel(initial, "client in", 32)
	block, _ := aes.NewCipher(expandLabel(secret, "quic key", 16))
	aead, _ := cipher.NewGCM(block)
	hp, _ := aes.NewCipher(expandLabel(secret, "quic hp", 16))
	return InitialKeys{aead: aead, iv: expandLabel(secret, "quic iv", 12), hp: hp}
}

// expandLabel is TLS 1.3's HKDF-Expand-Label with an empty context.
func expandLabel(secret []byte, label string, n int) []byte {
	full := "tls13 " + label
	info := binary.BigEndian.AppendUint16(nil, uint16(n))
	info = append(info, byte(len(full)))
	info = append(info, full...)
	info = append(info, 0)
	out, _ := hkdf.Expand(sha256.New, secret, string(info), n)
	return out
}

// InitialPacket appends to b one protected Initial packet of the
// connection dcid carrying hello from off in a CRYPTO frame, padded to a
// 1200-byte datagram; it returns the packet and how many bytes of hello it
// holds.
func InitialPacket(b []byte, k InitialKeys, dcid, scid []byte, pn uint32, hello []byte, off int) ([]byte, int) {
	const size, pnLen = 1200, 4
	b = append(b, 0xc0|(pnLen-1)) // long header, Initial, 4-byte packet number
	b = binary.BigEndian.AppendUint32(b, 1)
	b = append(b, byte(len(dcid)))
	b = append(b, dcid...)
	b = append(b, byte(len(scid)))
	b = append(b, scid...)
	b = append(b, 0) // no token
	// Length (2-byte varint) covers the packet number, payload and tag.
	lenAt := len(b)
	b = append(b, 0, 0)
	pnAt := len(b)
	b = binary.BigEndian.AppendUint32(b, pn)
	hdrLen := len(b)
	payloadRoom := size - hdrLen - k.aead.Overhead()
	frame := []byte{0x06}
	frame = quicVarint(frame, uint64(off))
	n := min(len(hello)-off, payloadRoom-len(frame)-2)
	frame = quicVarint(frame, uint64(n))
	b = append(b, frame...)
	b = append(b, hello[off:off+n]...)
	for len(b) < hdrLen+payloadRoom {
		b = append(b, 0) // PADDING
	}
	binary.BigEndian.PutUint16(b[lenAt:], uint16(pnLen+payloadRoom+k.aead.Overhead())|0x4000)
	nonce := make([]byte, 12)
	copy(nonce, k.iv)
	for i := range 4 {
		nonce[8+i] ^= b[pnAt+i]
	}
	b = k.aead.Seal(b[:hdrLen], nonce, b[hdrLen:], b[:hdrLen])
	var mask [16]byte
	k.hp.Encrypt(mask[:], b[pnAt+4:pnAt+4+16])
	b[0] ^= mask[0] & 0x0f
	for i := range pnLen {
		b[pnAt+i] ^= mask[1+i]
	}
	return b, n
}

// RefusalOf reports whether datagram b is a server's stateless answer to a
// connection it never created — a CONNECTION_REFUSED (or any other
// Initial) sent with no connection state — and returns the client's
// Destination Connection ID it answers. Such a packet's Source Connection
// ID is the ID the client chose (quic-go's sendError: nothing else to
// put there), while a connection the server admitted answers from an ID
// of its own; sent holds the IDs the client chose.
func RefusalOf(b []byte, sent func(dcid []byte) bool) ([]byte, bool) {
	// long header, version (4), DCID length and DCID, SCID length and SCID
	if len(b) < 7 || b[0]&0x80 == 0 {
		return nil, false
	}
	dl := int(b[5])
	if len(b) < 6+dl+1 {
		return nil, false
	}
	sl := int(b[6+dl])
	if len(b) < 7+dl+sl {
		return nil, false
	}
	scid := b[7+dl : 7+dl+sl]
	return scid, sent(scid)
}
