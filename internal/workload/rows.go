package workload

import "strconv"

// Rows builds generated rows in the bulk loaders' text format (tab-separated, newline-terminated:
// COPY and LOAD DATA read it, and dialect.Loader turns it into INSERTs where a server refuses
// both), so one generator feeds every engine. Generated values never hold quotes, tabs or
// backslashes, so nothing is escaped.
type Rows struct {
	Buf    []byte // what has been written
	fields int    // in the current row
}

// Reset empties the buffer for the next row.
func (r *Rows) Reset() {
	r.Buf = r.Buf[:0]
	r.fields = 0
}

func (r *Rows) sep() {
	if r.fields > 0 {
		r.Buf = append(r.Buf, '\t')
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
	r.Buf = gen(r.Buf)
}

func (r *Rows) Str(s string) { r.Text(func(b []byte) []byte { return append(b, s...) }) }

// Null appends a NULL field.
func (r *Rows) Null() {
	r.sep()
	r.Buf = append(r.Buf, `\N`...)
}

// End closes the row.
func (r *Rows) End() {
	r.Buf = append(r.Buf, '\n')
	r.fields = 0
}
