"""Trust in the labels: validation of the judgments (:mod:`.validation`) and agreement between
labellers (:mod:`.agreement`), before any number is read off them.
"""
