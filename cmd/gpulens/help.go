package main

import (
	"embed"
	"strings"
)

// helpFiles are the commands' long help, prose kept apart from the flags.
//
//go:embed help/*.txt
var helpFiles embed.FS

// help is the long help of command name, help/NAME.txt without its final
// line feed.
func help(name string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic(err) // a command without its help file is a build mistake
	}
	return strings.TrimSuffix(string(b), "\n")
}

// examples are the command's examples, help/NAME.examples.txt: text that
// a reader of the help changes, apart from the Go that registers flags.
func examples(name string) string { return help(name + ".examples") }
