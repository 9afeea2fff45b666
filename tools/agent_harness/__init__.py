"""Test harnesses of the local stack: the container tier (`make test-lambda`), the turn fuzzer, the
import-closure check of each function's package, and the wire-level Bedrock and OpenAI-compatible
stand-ins they and the tests run the real client code against. Nothing here is deployed."""
