// Package pgbenchscript reads pgbench's custom scripts (pgbench -f FILE@WEIGHT, and the built-in
// tpcb-like, simple-update and select-only) and runs them on any engine, so a pgbench user's
// script measures PostgreSQL, MySQL and MariaDB alike without a rewrite.
//
// The language is pgbench's (PostgreSQL 17): SQL commands ending at a semicolon outside quotes,
// possibly over several lines, with :name variables; and the meta-commands \set, \sleep, \if,
// \elif, \else, \endif and \gset (ending a query in place of its semicolon). Expressions are
// pgbench's, with its operators and functions computed as pgbench computes them (functions.go).
// Meta-commands that run programs (\shell, \setshell) or change the protocol (\startpipeline,
// \aset) are refused with their name: fairbench runs as root and sends every engine the same
// protocol. Transaction control (BEGIN, START TRANSACTION, END, COMMIT, ROLLBACK) is sent as
// each engine spells it, so pgbench's END works on MySQL too.
package pgbenchscript

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// Script is one parsed script with its weight among the scripts of a run.
type Script struct {
	Name     string
	Weight   int
	Commands []Command
}

// Command is one step of a script.
type Command struct {
	Kind CommandKind
	Line int
	// SQL commands: the text with each :variable replaced by ? and the variables in order;
	// Control marks BEGIN/COMMIT/ROLLBACK, sent as the engine spells them.
	SQL     string
	Vars    []string
	Control string
	Gset    bool
	Prefix  string
	Class   sqldb.Class
	// \set
	Var  string
	Expr expr
	// \sleep: Expr (or a variable) times Unit
	Unit time.Duration
	// \if, \elif, \else: Jump is the next branch (or the \endif), where to go when the condition
	// is false; End is the \endif, where a branch that ran goes on from.
	Jump, End int
}

// CommandKind tells the commands apart.
type CommandKind int

// The commands a script may hold.
const (
	SQL CommandKind = iota
	Set
	Sleep
	If
	Elif
	Else
	Endif
)

// ParseError names the script, line and problem, and how to fix it when that is known.
type ParseError struct {
	Script string
	Line   int
	Msg    string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.Script, e.Line, e.Msg) }

// Parse reads a script's text. name is what errors call it (the file's path).
func Parse(name, text string) (*Script, error) {
	p := &parser{name: name, s: &Script{Name: name, Weight: 1}}
	if len(text) > maxScriptBytes {
		return nil, p.fail(1, "the script is %d bytes, more than the %d fairbench reads: pgbench scripts are a few lines", len(text), maxScriptBytes)
	}
	if err := p.run(text); err != nil {
		return nil, err
	}
	if err := p.link(); err != nil {
		return nil, err
	}
	if len(p.s.Commands) == 0 {
		return nil, &ParseError{name, 1, "the script has no commands: give it SQL or meta-commands, as pgbench -f expects"}
	}
	return p.s, nil
}

type parser struct {
	name string
	s    *Script
	sql  strings.Builder // the SQL command being read
	at   int             // its first line
}

func (p *parser) fail(line int, format string, args ...any) error {
	return &ParseError{p.name, line, fmt.Sprintf(format, args...)}
}

// run splits the text into SQL commands and meta-command lines.
func (p *parser) run(text string) error {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line, n := lines[i], i+1
		// A meta-command line may continue on the next after a trailing backslash.
		for strings.HasPrefix(strings.TrimSpace(line), `\`) && strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + lines[i]
		}
		trimmed := strings.TrimSpace(line)
		if p.sql.Len() == 0 && strings.HasPrefix(trimmed, `\`) {
			if err := p.meta(n, trimmed); err != nil {
				return err
			}
			continue
		}
		if err := p.sqlLine(n, line); err != nil {
			return err
		}
	}
	if strings.TrimSpace(p.sql.String()) != "" {
		return p.fail(p.at, "the SQL command starting here has no closing semicolon: end it with ;")
	}
	return nil
}

// sqlLine adds one line to the SQL command being read, ending commands at semicolons outside
// quotes and comments, and a command ended by \gset at the \gset.
func (p *parser) sqlLine(n int, line string) error {
	var q quotes
	start := 0
	for j := 0; j < len(line); j++ {
		c := line[j]
		switch {
		case q.inside(c):
		case c == '-' && j+1 < len(line) && line[j+1] == '-':
			p.add(n, line[start:j])
			p.add(n, "\n")
			return nil
		case c == ';':
			p.add(n, line[start:j])
			if err := p.endSQL(false, ""); err != nil {
				return err
			}
			start = j + 1
		case c == '\\':
			p.add(n, line[start:j])
			return p.gset(n, strings.TrimSpace(line[j:]))
		}
	}
	p.add(n, line[start:])
	p.add(n, "\n")
	return nil
}

func (p *parser) add(n int, text string) {
	if p.sql.Len() == 0 && strings.TrimSpace(text) == "" {
		return
	}
	if p.sql.Len() == 0 {
		p.at = n
	}
	p.sql.WriteString(text)
}

// gset ends the SQL command with \gset [prefix].
func (p *parser) gset(n int, rest string) error {
	f := strings.Fields(rest)
	switch {
	case len(f) == 0 || f[0] != `\gset`:
		return p.fail(n, "%s inside a SQL command: only \\gset may end a query (a meta-command starts its own line)", strings.Join(f[:min(1, len(f))], ""))
	case len(f) > 2:
		return p.fail(n, `\gset takes at most one prefix`)
	case strings.TrimSpace(p.sql.String()) == "":
		return p.fail(n, `\gset must end a query, in place of its semicolon`)
	}
	prefix := ""
	if len(f) == 2 {
		prefix = f[1]
	}
	return p.endSQL(true, prefix)
}

func (p *parser) endSQL(gset bool, prefix string) error {
	text := strings.TrimSpace(p.sql.String())
	p.sql.Reset()
	if text == "" {
		return nil
	}
	c := Command{Kind: SQL, Line: p.at, Gset: gset, Prefix: prefix}
	c.SQL, c.Vars = bindVars(text)
	c.Control, c.Class = control(text), sqldb.ClassOf(text)
	if c.Control == "BEGIN" && !plainBegin(text) {
		// Sent as each engine spells a plain BEGIN, its options would be dropped without a word.
		return p.fail(p.at, "%q: fairbench sends BEGIN as each engine spells it, without options such as an isolation level or READ ONLY, which would change your script; drop them (a workload file's isolation: sets a level on every engine)", text)
	}
	if gset && c.Control != "" {
		return p.fail(p.at, `\gset needs a query that returns a row (a SELECT, or a statement with RETURNING)`)
	}
	p.s.Commands = append(p.s.Commands, c)
	return nil
}

// bindVars turns :name into ? and lists the names, leaving :: casts and text in quotes alone.
func bindVars(sql string) (string, []string) {
	var b strings.Builder
	var vars []string
	var q quotes
	for i := 0; i < len(sql); i++ {
		c := sql[i]
		switch {
		case q.inside(c):
		case c == ':' && i+1 < len(sql) && sql[i+1] == ':':
			b.WriteString("::")
			i++
			continue
		case c == ':' && i+1 < len(sql) && isIdentByte(sql[i+1]):
			j := i + 1
			for j < len(sql) && isIdentByte(sql[j]) {
				j++
			}
			vars = append(vars, sql[i+1:j])
			b.WriteByte('?')
			i = j - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String(), vars
}

// quotes follows SQL's quoted text and identifiers byte by byte.
type quotes struct{ open byte }

// inside takes the next byte and says whether it belongs to quoted text (its quote marks
// included), where semicolons, comments and variables mean nothing.
func (q *quotes) inside(c byte) bool {
	switch {
	case q.open != 0:
		if c == q.open {
			q.open = 0
		}
		return true
	case c == '\'' || c == '"':
		q.open = c
		return true
	}
	return false
}

func isIdentByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// plainBegin says whether a BEGIN holds nothing but the words every engine spells its own way:
// BEGIN, BEGIN WORK, BEGIN TRANSACTION, START TRANSACTION.
func plainBegin(sql string) bool {
	words := strings.Fields(strings.ToUpper(strings.TrimSuffix(strings.TrimSpace(sql), ";")))
	switch len(words) {
	case 1:
		return words[0] == "BEGIN"
	case 2:
		return (words[0] == "BEGIN" && (words[1] == "WORK" || words[1] == "TRANSACTION")) ||
			(words[0] == "START" && words[1] == "TRANSACTION")
	}
	return false
}

// control is the transaction control a command is (BEGIN, COMMIT, ROLLBACK), or "".
func control(sql string) string {
	switch strings.ToUpper(strings.Fields(sql)[0]) {
	case "BEGIN", "START":
		return "BEGIN"
	case "END", "COMMIT":
		return "COMMIT"
	case "ROLLBACK", "ABORT":
		return "ROLLBACK"
	}
	return ""
}

// meta reads one meta-command line.
func (p *parser) meta(n int, line string) error {
	cmd, rest := line, ""
	if i := strings.IndexAny(line, " \t"); i >= 0 {
		cmd, rest = line[:i], strings.TrimSpace(line[i:])
	}
	c := Command{Line: n}
	var err error
	switch cmd {
	case `\set`:
		c.Kind = Set
		name, e := rest, ""
		if i := strings.IndexAny(rest, " \t"); i >= 0 {
			name, e = rest[:i], rest[i:]
		}
		if name == "" || strings.TrimSpace(e) == "" || !validName(name) {
			return p.fail(n, `\set needs a variable name and an expression: \set aid random(1, 100000 * :scale)`)
		}
		c.Var = name
		if c.Expr, err = parseExpr(e); err != nil {
			return p.fail(n, `\set %s: %v`, name, err)
		}
	case `\sleep`:
		c.Kind = Sleep
		if err = p.sleep(&c, rest); err != nil {
			return err
		}
	case `\if`, `\elif`:
		c.Kind = If
		if cmd == `\elif` {
			c.Kind = Elif
		}
		if c.Expr, err = parseExpr(rest); err != nil {
			return p.fail(n, `%s: %v`, cmd, err)
		}
	case `\else`, `\endif`:
		c.Kind = Else
		if cmd == `\endif` {
			c.Kind = Endif
		}
		if rest != "" {
			return p.fail(n, `%s takes no argument`, cmd)
		}
	case `\gset`:
		return p.fail(n, `\gset must end a query on the query's own last line, in place of its semicolon`)
	case `\shell`, `\setshell`:
		return p.fail(n, `%s is not supported: fairbench runs as root and does not run programs from a script; compute the value with \set`, cmd)
	case `\aset`, `\startpipeline`, `\endpipeline`, `\syncpipeline`:
		return p.fail(n, `%s is not supported: every engine is sent the same one-statement-at-a-time protocol; use \gset, or plain statements`, cmd)
	default:
		return p.fail(n, "unknown meta-command %s: pgbench's are \\set, \\sleep, \\if, \\elif, \\else, \\endif and \\gset", cmd)
	}
	p.s.Commands = append(p.s.Commands, c)
	return nil
}

func validName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) {
			return false
		}
	}
	return s != ""
}

// sleep reads "\sleep N [us|ms|s]" where N is a number or a :variable.
func (p *parser) sleep(c *Command, rest string) error {
	f := strings.Fields(rest)
	if len(f) == 0 || len(f) > 2 {
		return p.fail(c.Line, `\sleep needs a duration: \sleep 10 ms (units us, ms or s; s when none)`)
	}
	c.Unit = time.Second
	if len(f) == 2 {
		switch f[1] {
		case "us":
			c.Unit = time.Microsecond
		case "ms":
			c.Unit = time.Millisecond
		case "s":
		default:
			return p.fail(c.Line, `\sleep unit %q: use us, ms or s`, f[1])
		}
	}
	if strings.HasPrefix(f[0], ":") && validName(f[0][1:]) {
		c.Expr = variable{f[0][1:]}
		return nil
	}
	i, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || i < 0 {
		return p.fail(c.Line, `\sleep %s: give a whole number or a :variable`, f[0])
	}
	c.Expr = literal{intOf(i)}
	return nil
}

// link matches \if with its \elif, \else and \endif, setting each branch's Jump.
func (p *parser) link() error {
	type open struct{ branches []int }
	var stack []*open
	cmds := p.s.Commands
	for i, c := range cmds {
		switch c.Kind {
		case If:
			stack = append(stack, &open{branches: []int{i}})
		case Elif, Else:
			if len(stack) == 0 {
				return p.fail(c.Line, "%s without \\if", kindName(c.Kind))
			}
			top := stack[len(stack)-1]
			if cmds[top.branches[len(top.branches)-1]].Kind == Else {
				return p.fail(c.Line, "%s after \\else", kindName(c.Kind))
			}
			top.branches = append(top.branches, i)
		case Endif:
			if len(stack) == 0 {
				return p.fail(c.Line, `\endif without \if`)
			}
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			// Each branch jumps to the next when its condition fails; a branch that ran goes on
			// from \endif.
			for k, b := range top.branches {
				next := i
				if k+1 < len(top.branches) {
					next = top.branches[k+1]
				}
				cmds[b].Jump, cmds[b].End = next, i
			}
		}
	}
	if len(stack) > 0 {
		return p.fail(cmds[stack[len(stack)-1].branches[0]].Line, `\if without \endif`)
	}
	return nil
}

func kindName(k CommandKind) string {
	return map[CommandKind]string{If: `\if`, Elif: `\elif`, Else: `\else`, Endif: `\endif`}[k]
}

// ParseWeighted reads "NAME[@WEIGHT]" as pgbench -f and -b do.
func ParseWeighted(arg string) (name string, weight int, err error) {
	name, w, has := strings.Cut(arg, "@")
	weight = 1
	if has {
		weight, err = strconv.Atoi(w)
		if err != nil || weight < 0 {
			return "", 0, fmt.Errorf("script %q: the weight after @ must be a whole number from 0 up, e.g. %s@5", arg, name)
		}
	}
	if name == "" {
		return "", 0, errors.New("empty script name: give a file or a built-in (tpcb-like, simple-update, select-only), e.g. tpcb-like@1")
	}
	return name, weight, nil
}
