"""Framework adapters over :mod:`toolsift.client`, each an optional extra of its own: import the one
you use (``toolsift.integrations.langchain``, ``.langgraph``, ``.llamaindex``, ``.litellm``,
``.anthropic``, ``.openai``) after ``pip install 'toolsift[<framework>]'``. Nothing is imported here,
so importing the package needs no framework.
"""

__all__: list[str] = []
