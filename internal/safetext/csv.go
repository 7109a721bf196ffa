package safetext

import "strings"

// formulaPrefix are the first characters that make a spreadsheet
// (Excel, LibreOffice Calc, Google Sheets) read a CSV cell as a formula
// or a DDE command, after OWASP's "CSV Injection"
// (https://owasp.org/www-community/attacks/CSV_Injection: =, +, -, @,
// tab, carriage return) and OWASP ASVS 4.0 V1.2.10 (NUL too); a line
// feed is there because Calc reads a quoted cell's second line as a cell
// of its own when it imports with "formulas" on.
const formulaPrefix = "=+-@\t\r\n\x00"

// CSVCell is a cell of text from the store (a team, a namespace, a pod, a
// node: label values whoever can label a namespace or write to the store
// chooses) kept from being read as a formula: one that starts with a
// formula prefix gets a leading apostrophe, which every spreadsheet reads
// as "text" and hides. It is for text only: the numbers gpulens writes
// (a negative saving) stay numbers, so they never pass here. The CSV
// quoting itself (commas, quotes, line breaks) is encoding/csv's.
func CSVCell(s string) string {
	if s != "" && strings.IndexByte(formulaPrefix, s[0]) >= 0 {
		return "'" + s
	}
	return s
}
