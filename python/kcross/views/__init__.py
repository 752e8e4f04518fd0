"""The terminal views of kcross's result objects: a comparison (compare), a check's
outcome, a trend (history), in the formats a person reads (a rich table, benchstat's or
ministat's text layout, Markdown).  Siblings of the exports (kcross.export: files other
tools read) and the HTML report (kcross.report); they compute nothing: every figure and
verdict comes from kcross.judge."""
