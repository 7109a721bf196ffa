package manifest

import (
	"bufio"
	"bytes"
	"os"
)

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

func readFile(path string) ([]byte, error) { return os.ReadFile(path) }
