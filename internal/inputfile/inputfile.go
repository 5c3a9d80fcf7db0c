// Package inputfile reads the files a user hands fairbench (results, suites), bounded in size: a
// decoder holds a large file many times over in memory, so a file far larger than any of its
// kind is refused before it is decoded.
package inputfile

import (
	"fmt"
	"io"
	"os"
)

// TooLargeError is a file over the size its kind can have.
type TooLargeError struct {
	Path string
	Max  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %d MiB", e.Path, e.Max>>20)
}

// Read reads path whole if it is at most max bytes; a larger file is a *TooLargeError, read no
// further than max+1 bytes.
func Read(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &TooLargeError{Path: path, Max: max}
	}
	return data, nil
}
