package payload

// Schema is a protobuf message type the samples are instances of.
type Schema struct {
	f *format
}

func (s *Schema) format() *format { return s.f }
