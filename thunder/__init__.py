"""Thunder: learned de-identification of Korean court judgments (PyTorch Lightning)."""

__version__ = "0.1.0"
