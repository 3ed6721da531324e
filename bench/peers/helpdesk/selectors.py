# The tutorial's helpdesk/selectors.py, and the same rule for the 12-transition cases.
from bench.peers.helpdesk.models import Case, Ticket


def tickets_visible_to(user):
    """Staff see every ticket; everyone else the tickets they reported."""
    if not user.is_authenticated:
        return Ticket.objects.none()
    if user.is_staff:
        return Ticket.objects.all()
    return Ticket.objects.filter(reporter=user)


def cases_visible_to(user):
    if not user.is_authenticated:
        return Case.objects.none()
    if user.is_staff:
        return Case.objects.all()
    return Case.objects.filter(reporter=user)
