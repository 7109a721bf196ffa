package safetext

import "strings"

// ShellArg is s as one word a POSIX shell reads back as s, for a command
// gpulens suggests in a comment. Nothing is special between single quotes
// (https://pubs.opengroup.org/onlinepubs/9799919799/utilities/V3_chap02.html#tag_19_02_02),
// so the word is s between single quotes, each single quote in it closed,
// escaped and reopened:
//
//	it's  ->  'it'\''s'
//
// A word of only characters no shell treats specially is left bare, so an
// honest command reads as one would type it; an empty word is two quotes.
// Control characters are left to the comment's own escaping (Comment),
// which writes them as \x1b: the command stays one line.
func ShellArg(s string) string {
	if s != "" && strings.Trim(s, shellSafe) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellSafe are the characters a POSIX shell never expands, splits at or
// reads as an operator in a word: not ~, which expands at a word's start;
// = only assigns in a word before the command's name, and ShellArg's
// words are arguments.
const shellSafe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/:@%+="

// ShellObject is the object words of a kubectl command, "kind name", each
// as ShellArg writes it. A name that starts with "-" (no Kubernetes name
// does; a label value in a store can, such as "--all") would be read by
// kubectl as a flag however it is quoted, so it is written as one word,
// kind/name, which kubectl reads as the same object and never as a flag.
func ShellObject(kind, name string) string {
	if strings.HasPrefix(name, "-") {
		return ShellArg(kind + "/" + name)
	}
	return ShellArg(kind) + " " + ShellArg(name)
}
