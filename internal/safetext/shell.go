package safetext

import "strings"

// ShellArg is s as one word a POSIX shell reads back as s
// (https://pubs.opengroup.org/onlinepubs/9799919799/utilities/V3_chap02.html#tag_19_02_02:
// nothing is special between single quotes, and a single quote is
// written as '\''), for a command gpulens suggests in a comment. A word
// of only characters no shell treats specially is left bare, so an
// honest command reads as one would type it; an empty word is ''.
// Control characters are then left to the comment's own escaping
// (Comment), which writes them as \x1b: the command is one line.
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
