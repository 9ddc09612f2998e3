"""The kernel: standard library only, and the floor every other package stands on.

It owns what both the hook processes and the CLI must agree on: words and stemming, shell command
splitting, path globs, the small regex engine and its compiler, the step budget both matchers
charge (`budget`: per search and per hook call), the static check for regexes that
can backtrack for exponential time (`regex_hazard`), the one check classifier, the
INDEX.md cells and parser, the compiled-index format (build, patch, write, read), the Copilot and Gemini
tool names and hook files (`agent_tools`), `.lessonbank/` (every path under it, atomic writes,
appends, the records and the trial's arms), and the layers (`layers`: where the personal and team
banks live, and every layer's index merged for a hook). It may import
`lessonbank.errors` and `lessonbank.config` and nothing else of the package. Nothing is imported
here, so a hook loads only the modules it uses.
"""
