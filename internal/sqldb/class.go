package sqldb

import (
	"strings"
)

// Class is how a statement counts in a run's "queries performed" (reads, writes, other), as
// sysbench reports them. Every statement a connection sends is counted there by its class, so no
// workload counts its own: the figures are what went over the wire.
//
// The class is read from the statement's words, not from the answer: sysbench's MySQL driver
// calls an UPDATE that matched no row "other", and MySQL and PostgreSQL disagree on what an
// UPDATE that changed nothing affected, so an answer-based count would differ between engines
// for the same statements.
type Class uint8

// Statement classes.
const (
	// Other is transaction control, SET, CALL, DDL and anything unknown: a CALL of a routine that
	// writes is counted as a write only where the workload says so (CountAs).
	Other Class = iota
	// Read is a statement that only returns rows.
	Read
	// Write is a statement that may change data.
	Write
)

func (c Class) String() string {
	switch c {
	case Read:
		return "read"
	case Write:
		return "write"
	}
	return "other"
}

// ClassOf says how sql counts. A statement that starts as a read but may change data is a write:
// a data-modifying WITH, SELECT ... INTO (a new table on PostgreSQL, a file or variables on
// MySQL), and set_config (which could lift a session's read-only guard). A workload file on a
// user's existing tables takes anything but a read for a write before a run; the server's
// read-only session is the guard that holds.
func ClassOf(sql string) Class {
	if c, ok := classByFirstWord(sql); ok {
		return c
	}
	// Both families' readings (see readWords): the first word is the same in both, and a word
	// that may modify data in either makes a write.
	first, modifies := readWords(sql, false)
	_, modifiesToMySQL := readWords(sql, true)
	switch {
	case oneOf(first, "SELECT", "WITH", "VALUES", "TABLE", "SHOW"):
		if modifies || modifiesToMySQL {
			return Write
		}
		return Read
	case oneOf(first, "INSERT", "UPDATE", "DELETE", "REPLACE", "MERGE"):
		return Write
	}
	return Other
}

// classByFirstWord answers without allocating for statements whose first word decides (BEGIN,
// COMMIT, an INSERT): connections classify every statement they send, and these are most of a
// transaction's unprepared ones.
func classByFirstWord(sql string) (Class, bool) {
	i := 0
	for i < len(sql) && (sql[i] == ' ' || sql[i] == '\t' || sql[i] == '\n' || sql[i] == '\r') {
		i++
	}
	j := i
	for j < len(sql) && isNameStart(sql[j]) {
		j++
	}
	if j < len(sql) && !(sql[j] == ' ' || sql[j] == '\t' || sql[j] == '\n' || sql[j] == '\r' || sql[j] == ';' || sql[j] == '(') {
		return Other, false // a quote, comment or odd character: the full reading decides
	}
	switch word := sql[i:j]; {
	case oneOf(word, "INSERT", "UPDATE", "DELETE", "REPLACE", "MERGE"):
		return Write, true
	case oneOf(word, "BEGIN", "START", "COMMIT", "END", "ROLLBACK", "ABORT", "SAVEPOINT", "RELEASE", "SET", "CALL"):
		return Other, true
	}
	return Other, false
}

// readWords reads the statement's words outside string literals, quoted identifiers and
// comments, the way one family reads them: a backslash escapes a quote in MySQL's strings and not
// in PostgreSQL's, so a string could end at another place for each, and ClassOf reads both so
// that nothing either engine would run as code is missed. MySQL runs what is in a /*! comment,
// so its text counts too. It says the first word and whether a word names a way to change data
// (mayModify). Nothing is allocated: connections classify the statements they send.
func readWords(sql string, backslashEscapes bool) (first string, modifies bool) {
	prev := ""
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(sql, i, backslashEscapes && c != '`')
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			i = skipTo(sql, i, "\n")
		case c == '#' && backslashEscapes: // MySQL's line comment
			i = skipTo(sql, i, "\n")
		case c == '/' && strings.HasPrefix(sql[i:], "/*!"), c == '/' && strings.HasPrefix(sql[i:], "/*M!"):
			i += 3 // its text is code to MySQL and MariaDB
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			i = skipTo(sql, i+2, "*/")
		case isNameChar(c):
			j := i
			for j < len(sql) && (isNameChar(sql[j]) || sql[j] == '$') {
				j++
			}
			word := sql[i:j]
			if first == "" {
				first = word
			}
			modifies = modifies || mayModify(prev, word)
			prev, i = word, j
		default:
			i++
		}
	}
	return first, modifies
}

// mayModify says whether a word of a statement that starts as a read names a way to change data.
// UPDATE after FOR or KEY is a locking read (FOR UPDATE, FOR NO KEY UPDATE); MySQL's INSERT()
// string function is taken for a write too, which costs a clear refusal, not a hole.
func mayModify(prev, word string) bool {
	if oneOf(word, "INSERT", "DELETE", "MERGE", "INTO", "SET_CONFIG") {
		return true
	}
	return strings.EqualFold(word, "UPDATE") && !oneOf(prev, "FOR", "KEY")
}

// oneOf says whether word is one of the upper-case words, in any case.
func oneOf(word string, upper ...string) bool {
	for _, u := range upper {
		if strings.EqualFold(word, u) {
			return true
		}
	}
	return false
}

// skipQuoted is the index after the quoted text that opens at i; a doubled quote is part of it,
// and where escapes counts, so is a quote after a backslash.
func skipQuoted(sql string, i int, escapes bool) int {
	q := sql[i]
	for j := i + 1; j < len(sql); j++ {
		switch {
		case escapes && sql[j] == '\\':
			j++
		case sql[j] == q && j+1 < len(sql) && sql[j+1] == q:
			j++
		case sql[j] == q:
			return j + 1
		}
	}
	return len(sql)
}

// skipTo is the index after the first end at or after i, or the text's end.
func skipTo(sql string, i int, end string) int {
	if k := strings.Index(sql[i:], end); k >= 0 {
		return i + k + len(end)
	}
	return len(sql)
}

func isNameStart(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isNameChar(c byte) bool  { return isNameStart(c) || (c >= '0' && c <= '9') }
