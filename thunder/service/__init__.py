"""The HTTP service and review page: request bodies (``bodies``), dynamic batching (``batching``), the app
(``app``). May import ``deid`` and below."""
