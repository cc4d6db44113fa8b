"""Text: validation helpers, normalisation, language, segmentation, lexicon and IDF, timestamps."""
