package codec

import "github.com/wirebench/wirebench/toon"

// MediaTOON is the canonical TOON media type (provisional, spec §17).
const MediaTOON = "text/toon"

// toonCodec is our own TOON v4 codec (package toon) with its defaults:
// two-space indentation, comma delimiter, strict decoding. The api types
// carry only json tags, which package toon falls back to.
type toonCodec struct{}

func (toonCodec) Name() string                  { return "toon" }
func (toonCodec) Marshal(v any) ([]byte, error) { return toon.Marshal(v) }
func (toonCodec) Unmarshal(data []byte, v any) error {
	return toon.UnmarshalOptions{MaxDepth: DefaultLimits.MaxDepth}.Unmarshal(data, v)
}

func init() { Register(toonCodec{}, MediaTOON, "application/toon") }
