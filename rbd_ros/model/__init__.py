"""The model: the frozen arrays of a robot (Model), its workspace (Data), spatial algebra."""
from .model import Data, Model

__all__ = ["Data", "Model"]
