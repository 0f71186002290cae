"""Amazon Bedrock: ConverseStream and Anthropic's Messages inside Bedrock's event stream.

- :mod:`~relavium_lsp.llm.bedrock.eventstream` — the binary
  ``application/vnd.amazon.eventstream`` framing, CRCs checked;
- :mod:`~relavium_lsp.llm.bedrock.converse` — Converse request mapping and stream events;
- :mod:`~relavium_lsp.llm.bedrock.credentials` — SigV4 signing and the AWS credential chain
  through ``botocore`` (an optional extra, ``relavium-lsp[bedrock]``), or a Bedrock API key;
- :mod:`~relavium_lsp.llm.bedrock.errors` — Bedrock's exceptions as seam error kinds;
- :mod:`~relavium_lsp.llm.bedrock.provider` — the adapter. Loaded only when a Bedrock
  provider is built.
"""
