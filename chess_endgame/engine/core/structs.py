"""The structs of arrays the core passes by reference (:class:`~.treestate.Tree`, :class:`~.tbtables.Tables`),
readable by code compiled without reference counts.

numba's own ``structref.register`` reads a field through the runtime's ``meminfo_data``, which code compiled
with ``_nrt=False`` may not call, and counts a reference to every array it reads (an atomic increment and
decrement, a call each). :func:`register` defines the same struct type, except that a field is read through the
struct's data pointer directly: counted where the code counts references, borrowed where it does not (the
struct, held by its caller, holds the array for the whole call). Setting a field needs the counts, so code
compiled without them cannot; the core sets fields only when it builds a struct.

:func:`define_proxy` is numba's ``structref.define_proxy`` with one difference: a struct passed from Python to
a function compiled without counts gives back, at once, the count its unboxing took. The Python proxy holds
the struct for the call; without that release the struct would never be freed.
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, imputils, types
from numba.core.datamodel import default_manager, models
from numba.core.extending import NativeValue, box, infer_getattr, lower_getattr_generic, lower_setattr_generic, unbox
from numba.core.typing.templates import AttributeTemplate
from numba.experimental import structref

#: The types of numba's runtime functions that the struct code calls by name (linked into every compiled module).
_VOID_P = cgutils.voidptr_t
_DATA_OF = ir.FunctionType(_VOID_P, [_VOID_P])
_RELEASE = ir.FunctionType(ir.VoidType(), [_VOID_P])


def _payload(context, builder, struct_type, value):
    """The struct's fields, read in place through its data pointer: ``NRT_MemInfo_data_fast`` only loads
    that pointer (LLVM inlines it) and, unlike ``context.nrt.meminfo_data``, is allowed without counts."""
    meminfo = cgutils.create_struct_proxy(struct_type)(context, builder, value=value).meminfo
    data_of = cgutils.get_or_insert_function(builder.module, _DATA_OF, "NRT_MemInfo_data_fast")
    data = builder.call(data_of, [meminfo])
    payload_type = struct_type.get_data_type()
    pointer_type = context.data_model_manager[payload_type].get_value_type().as_pointer()
    return cgutils.create_struct_proxy(payload_type)(context, builder, ref=builder.bitcast(data, pointer_type))


def register(struct_type: type) -> type:
    """Register a subclass of ``numba.core.types.StructRef`` (as a class decorator): its data model, and
    reading and setting its fields in compiled code (see the module's docstring)."""
    default_manager.register(struct_type, models.StructRefModel)

    @infer_getattr
    class Attributes(AttributeTemplate):
        key = struct_type

        def generic_resolve(self, typ, attr):
            return typ.field_dict.get(attr)

    @lower_getattr_generic(struct_type)
    def get_field(context, builder, typ, value, attr):
        field = getattr(_payload(context, builder, typ, value), attr)
        return imputils.impl_ret_borrowed(context, builder, typ.field_dict[attr], field)

    @lower_setattr_generic(struct_type)
    def set_field(context, builder, sig, args, attr):
        struct, new_type = sig.args
        if not context.enable_nrt:
            raise TypeError(f"{struct_type.__name__}.{attr} is set in a function compiled without reference counts "
                            "(@njit(refcounted=True) sets fields)")
        instance, value = args
        payload = _payload(context, builder, struct, instance)
        field_type = struct.field_dict[attr]
        value = context.cast(builder, value, new_type, field_type)
        old = getattr(payload, attr)
        context.nrt.incref(builder, field_type, value)
        context.nrt.decref(builder, field_type, old)  # after the incref: the new value may be the old one
        setattr(payload, attr, value)

    return struct_type


def define_proxy(py_class: type, struct_type: type, fields: list[str]) -> None:
    """Make ``py_class`` (a ``StructRefProxy``) build ``struct_type`` from ``fields`` in Python and compiled
    code, and box and unbox it (see the module's docstring)."""
    structref.define_constructor(py_class, struct_type, fields)
    make_proxy = py_class._numba_box_
    meminfo_type = types.MemInfoPointer(types.voidptr)

    @box(struct_type)
    def box_struct(typ, value, c):
        meminfo = cgutils.create_struct_proxy(typ)(c.context, c.builder, value=value).meminfo
        boxed_meminfo = c.box(meminfo_type, meminfo)
        make = c.pyapi.unserialize(c.pyapi.serialize_object(make_proxy))
        typ_object = c.pyapi.unserialize(c.pyapi.serialize_object(typ))
        proxy = c.pyapi.call_function_objargs(make, [typ_object, boxed_meminfo])
        for obj in (make, typ_object, boxed_meminfo):
            c.pyapi.decref(obj)
        return proxy

    @unbox(struct_type)
    def unbox_struct(typ, obj, c):
        meminfo_object = c.pyapi.object_getattr_string(obj, "_meminfo")
        meminfo = c.unbox(meminfo_type, meminfo_object).value  # counted
        c.pyapi.decref(meminfo_object)
        if not c.context.enable_nrt:  # nothing will release it after the call: release it now
            release = cgutils.get_or_insert_function(c.builder.module, _RELEASE, "NRT_decref")
            c.builder.call(release, [meminfo])
        struct = cgutils.create_struct_proxy(typ)(c.context, c.builder)
        struct.meminfo = meminfo
        return NativeValue(struct._getvalue())
