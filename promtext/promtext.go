// Package promtext writes metrics in the Prometheus text exposition format
// (version 0.0.4): append-style helpers for a server's own counters, and
// the Go runtime's and the process's figures under the names Prometheus'
// client_golang gives them.
//
// It replaces client_golang in the reference server (issue 17): importing
// client_golang builds a default registry with its Go and process
// collectors and compiles procfs' regular expressions at init, about
// 130 kB of live heap that every GC cycle of a server under load marks
// again, and registering its Go collector on the first scrape added
// 130 kB more. Here nothing is allocated until a scrape, and a scrape
// leaves nothing behind.
package promtext

import (
	"math"
	"strconv"
)

// ContentType is the media type of the text format.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Metric types, for AppendHeader.
const (
	Counter = "counter"
	Gauge   = "gauge"
	Summary = "summary"
	Untyped = "untyped"
)

// AppendHeader appends a family's # HELP and # TYPE lines.
func AppendHeader(b []byte, name, help, typ string) []byte {
	b = append(b, "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = appendEscaped(b, help, false)
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, typ...)
	return append(b, '\n')
}

// AppendFloat appends one sample: name, the label pairs (name, value,
// name, value, ...; an odd last name is ignored), the value.
func AppendFloat(b []byte, name string, v float64, labels ...string) []byte {
	b = appendName(b, name, labels)
	return append(appendFloat(b, v), '\n')
}

// AppendUint is AppendFloat for an integer value, written exactly (a
// float64 would round counters past 2^53).
func AppendUint(b []byte, name string, v uint64, labels ...string) []byte {
	b = appendName(b, name, labels)
	return append(strconv.AppendUint(b, v, 10), '\n')
}

// AppendGauge appends a family of one unlabelled gauge.
func AppendGauge(b []byte, name, help string, v float64) []byte {
	return AppendFloat(AppendHeader(b, name, help, Gauge), name, v)
}

// AppendCounter appends a family of one unlabelled counter.
func AppendCounter(b []byte, name, help string, v uint64) []byte {
	return AppendUint(AppendHeader(b, name, help, Counter), name, v)
}

func appendName(b []byte, name string, labels []string) []byte {
	b = append(b, name...)
	if len(labels) >= 2 {
		b = append(b, '{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, labels[i]...)
			b = append(b, `="`...)
			b = appendEscaped(b, labels[i+1], true)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	return append(b, ' ')
}

// appendEscaped escapes as the format requires: backslash and newline
// in help text, and the double quote too in label values.
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendFloat writes v as client_golang does: the shortest form that
// reads back exactly, and NaN, +Inf and -Inf by name.
func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
