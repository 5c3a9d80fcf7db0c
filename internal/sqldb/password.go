package sqldb

import (
	"fmt"
	"os"
	"strings"
)

// PasswordEnv is the environment variable that gives the password for any engine, so it need not
// be on the command line, where every user of the machine can read it (ps).
const PasswordEnv = "FAIRBENCH_PASSWORD"

// ResolvePassword fills in a password the DSN did not give, from (first found) the DSN's
// password_file=PATH (the file's first line), FAIRBENCH_PASSWORD, then the engine's own
// variable: PGPASSWORD for PostgreSQL (a libpq passfile= also works there), MYSQL_PWD for MySQL
// and MariaDB. getenv is os.Getenv outside tests. Only targets the user gives are resolved this
// way; a server fairbench starts has its own credentials in its DSN.
func (t *Target) ResolvePassword(getenv func(string) string) error {
	if t.Password != "" {
		if t.passwordFile != "" {
			return fmt.Errorf("--target gives a password and password_file: give one")
		}
		return nil
	}
	if t.passwordFile != "" {
		pw, err := readPasswordFile(t.passwordFile)
		if err != nil {
			return err
		}
		t.Password = pw
		return nil
	}
	engineVar := "PGPASSWORD"
	if t.Kind.MySQLFamily() {
		engineVar = "MYSQL_PWD"
	}
	for _, name := range []string{PasswordEnv, engineVar} {
		if pw := getenv(name); pw != "" {
			t.Password = pw
			return nil
		}
	}
	return nil
}

// readPasswordFile reads the first line of path. Messages name the file, never its content.
func readPasswordFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--target password_file: cannot read %s: %v", path, unwrapPathError(err))
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return "", fmt.Errorf("--target password_file %s is empty: write the password on its first line", path)
	}
	return line, nil
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
