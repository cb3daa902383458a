import pytest

from tests.teams.helpers import Crew, crew


@pytest.fixture
def team_crew(db) -> Crew:
    return crew()
