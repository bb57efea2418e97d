#!/usr/bin/env python3
"""Turns a `swift-api-digester -dump-sdk` JSON dump into a sorted, one-declaration-a-line listing
(the form api/*.txt holds): the path of each public declaration, its kind and signature, and the
attributes that make a difference to a client (static, throws, final, settable, default
arguments, conformances), leaving out `package` and `@_spi` declarations. Used by scripts/check-api; reads the dump on stdin, writes stdout. Further dumps named as arguments
(the modules it imports) say which protocols are SPI, so a public type's conformance to one (in an
`@_spi` extension) is left out of its line too."""
import json
import sys

SKIP_ATTRS = {"HasStorage", "Transparent", "RawDocComment", "Implements", "HasInitialValue",
              "Custom", "Nonisolated", "Preconcurrency"}


def type_name(node):
    return node.get("printedName", node.get("name", "?"))


def attrs(node):
    out = [a for a in node.get("declAttributes", []) if a not in SKIP_ATTRS and a != "SPIAccessControl"]
    if node.get("spi_group_names"):
        out.insert(0, "@_spi(" + ", ".join(node["spi_group_names"]) + ")")
    if node.get("static"):
        out.append("static")
    if node.get("throwing"):
        out.append("throws")
    if node.get("implicit"):
        out.append("implicit")
    if node.get("isFromExtension"):
        out.append("extension")
    if node.get("genericSig"):
        out.append(node["genericSig"])
    return out


SPI_USRS = set()


def collect_spi(node):
    for child in node.get("children", []):
        if child.get("spi_group_names") and child.get("usr"):
            SPI_USRS.add(child["usr"])
        collect_spi(child)


def signature(node):
    kind = node.get("kind")
    children = node.get("children", [])
    if kind in ("Function", "Constructor", "Subscript"):
        params = []
        for p in children[1:]:
            params.append(type_name(p) + (" = default" if p.get("hasDefaultArg") else ""))
        ret = type_name(children[0]) if children else "?"
        return "(" + ", ".join(params) + ") -> " + ret
    if node.get("declKind") == "EnumElement":
        return ""
    if kind == "Var":
        kinds = sorted(a.get("accessorKind", a.get("name", "")) for a in node.get("accessors", []))
        return (type_name(children[0]) if children else "?") + " { " + " ".join(kinds) + " }"
    if kind == "TypeAlias":
        return "= " + (type_name(children[0]) if children else "?")
    if kind == "TypeDecl":
        extra = []
        if node.get("enumRawTypeName"):
            extra.append("raw " + node["enumRawTypeName"])
        confs = sorted(c.get("printedName", c.get("name")) for c in node.get("conformances", [])
                       if c.get("usr") not in SPI_USRS)
        if confs:
            extra.append(": " + ", ".join(confs))
        return " ".join(extra)
    return ""


def walk(node, path, out):
    for child in node.get("children", []):
        kind = child.get("kind")
        if kind in ("Import",) or kind.startswith("Type") and kind != "TypeDecl" and kind != "TypeAlias":
            continue
        # `package` declarations (the digester marks them isInternal) are not the client's API, nor
        # are `@_spi` ones (test hooks, the backend-author interface): an app imports the module
        # without `@_spi` and never sees them. swift-api-digester's dump has no switch to leave
        # SPI out (only -ignore-spi-group, for its diagnostics), so the listing drops them here.
        if child.get("isInternal") or child.get("spi_group_names"):
            continue
        name = child.get("printedName", child.get("name"))
        full = path + [name]
        line = " ".join(x for x in [".".join(full), child.get("declKind", kind), signature(child)] if x)
        a = attrs(child)
        if a:
            line += "  [" + ", ".join(a) + "]"
        if kind == "TypeDecl" and child.get("isExternal"):
            # Another module's type that this one extends: its extensions add API only through
            # what they declare public (an extension of `Mutex` with `package` members adds none).
            inner = []
            walk(child, full, inner)
            if inner:
                out.append(line)
                out.extend(inner)
            continue
        out.append(line)
        if kind == "TypeDecl":
            walk(child, full, out)


def main():
    root = json.load(sys.stdin)["ABIRoot"]
    collect_spi(root)
    for path in sys.argv[1:]:
        with open(path) as f:
            collect_spi(json.load(f)["ABIRoot"])
    out = []
    walk(root, [], out)
    for line in sorted(set(out)):
        print(line)


if __name__ == "__main__":
    main()
