"""What the language-model providers share: prompts, the tool schemas, and the six roles over a caller."""
