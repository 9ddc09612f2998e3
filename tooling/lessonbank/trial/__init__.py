"""The trial and the ledger: whether the lessons help, and what they cost.

stats (the rule fixed in advance and the estimate), ledger (the hooks' records read and joined),
chart, and simulate (synthetic sessions through the real hook processes). It reads what the hooks
write through the kernel's formats and never imports the hooks. It may import `bank`, `install`,
the kernel, `errors` and `config`.
"""
