package dialect

import "strings"

// Digests are the SQL expressions that let two engines prove they hold the same rows: a column's
// value as text that reads alike on both, and a hash of a row's text that both sum exactly.
type Digests interface {
	// ValueText is column (quoted) as text, given information_schema's data_type for it.
	ValueText(column, dataType string) string
	// Hash60 is the first 60 bits of SHA-256 of a text expression, as an integer that both
	// engines' SUM adds exactly (MySQL 9 has no MD5 any more).
	Hash60(text string) string
}

// ValueText: booleans as 0 and 1, byte strings in lower-case hex, as the MySQL family's own text
// of them.
func (postgres) ValueText(column, dataType string) string {
	switch dataType {
	case "bytea":
		return "encode(" + column + ", 'hex')"
	case "boolean":
		return column + "::int::text"
	}
	return column + "::text"
}

func (postgres) Hash60(text string) string {
	return "('x' || substr(encode(sha256(convert_to(" + text + ", 'UTF8')), 'hex'), 1, 15))::bit(60)::bigint"
}

func (innodb) ValueText(column, dataType string) string {
	if strings.Contains(dataType, "binary") || strings.Contains(dataType, "blob") {
		return "LOWER(HEX(" + column + "))"
	}
	return column
}

func (innodb) Hash60(text string) string {
	return "CAST(CONV(SUBSTRING(SHA2(" + text + ", 256), 1, 15), 16, 10) AS UNSIGNED)"
}
