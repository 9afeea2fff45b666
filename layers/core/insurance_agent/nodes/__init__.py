"""The logic of each graph node. Handlers in functions/<node>/app.py only wrap these."""
