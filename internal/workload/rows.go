package workload

import "strconv"

// Rows builds generated rows either as COPY's text format (tab-separated, newline-terminated;
// LOAD DATA reads it too) or as the value lists of a multi-row INSERT, so one generator feeds
// every engine's loader. Generated values never hold quotes, tabs or backslashes, so nothing is
// escaped.
type Rows struct {
	MySQL  bool   // INSERT value lists instead of text lines
	Buf    []byte // what has been written
	fields int    // in the current row
	rows   int    // since Reset
}

// Reset empties the buffer and starts it with prefix ("INSERT INTO t (...) VALUES " or "").
func (r *Rows) Reset(prefix string) {
	r.Buf = append(r.Buf[:0], prefix...)
	r.fields, r.rows = 0, 0
}

func (r *Rows) sep() {
	switch {
	case r.fields > 0 && r.MySQL:
		r.Buf = append(r.Buf, ',')
	case r.fields > 0:
		r.Buf = append(r.Buf, '\t')
	case r.MySQL:
		if r.rows > 0 {
			r.Buf = append(r.Buf, ',')
		}
		r.Buf = append(r.Buf, '(')
	}
	r.fields++
}

func (r *Rows) Int(v int64) {
	r.sep()
	r.Buf = strconv.AppendInt(r.Buf, v, 10)
}

// Text appends a string field that gen writes into the buffer itself, without a copy.
func (r *Rows) Text(gen func(b []byte) []byte) {
	r.sep()
	if r.MySQL {
		r.Buf = append(r.Buf, '\'')
	}
	r.Buf = gen(r.Buf)
	if r.MySQL {
		r.Buf = append(r.Buf, '\'')
	}
}

func (r *Rows) Str(s string) { r.Text(func(b []byte) []byte { return append(b, s...) }) }

func (r *Rows) Bytes(s []byte) { r.Text(func(b []byte) []byte { return append(b, s...) }) }

// End closes the row.
func (r *Rows) End() {
	if r.MySQL {
		r.Buf = append(r.Buf, ')')
	} else {
		r.Buf = append(r.Buf, '\n')
	}
	r.fields = 0
	r.rows++
}
