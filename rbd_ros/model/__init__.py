"""The model: the frozen arrays of a robot (Model), its workspace (Data), spatial algebra."""
from .data import Data
from .model import Model

__all__ = ["Data", "Model"]
