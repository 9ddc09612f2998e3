"""Matching: what a trigger is matched against, and how, with the standard library only.

It owns words and stemming (`words`), shell command lines cut into simple commands (`shell`), the
words of each that run (`shell_words`) and those each tool reads as data (`shell_data`), path
globs (`globs`), the small regex engine and its compiler
(`regex_engine`, `regex_compiler`), the static check for regexes that can backtrack for
exponential time (`regex_hazard`, `regex_spans`), the step budget both matchers charge
(`budget`), the one check classifier (`check_commands`), where each agent writes a command's exit
status (`exit_status`) and the Copilot and Gemini tool names (`agent_tools`). It may import
`lessonbank.errors` and `lessonbank.config` and nothing else of the package; nothing is imported
here, so a hook loads only the modules it uses.
"""
