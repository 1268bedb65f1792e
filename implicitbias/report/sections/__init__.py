"""Report sections, one module each (see ``implicitbias.report``)."""
