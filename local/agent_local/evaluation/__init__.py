"""`agent eval`: a labelled question set run as real turns over a fresh tenant, scored and reported.

- `questions`: the question file's typed models (the insurance-law-fa set's format);
- `scoring`: the set's rule (normalisation, verdicts, FIT/REPORT halves, summaries, threshold sweep);
- `runner`: ingest into an isolated home and tenant, every question as a turn on the local stack;
- `report`: report.json and the self-contained report.html;
- `console`: the progress bar and the tables printed while and after it runs.
"""
